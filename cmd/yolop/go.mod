module yolop.dev/cmd/yolop

go 1.26
