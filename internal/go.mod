module yolop.dev/internal

go 1.26.0
