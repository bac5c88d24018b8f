module yolop.dev/packaging

go 1.26
