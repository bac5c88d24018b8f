module yolop.dev/tools/schemagen

go 1.26
