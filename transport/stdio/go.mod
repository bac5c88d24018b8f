module yolop.dev/transport/stdio

go 1.26
