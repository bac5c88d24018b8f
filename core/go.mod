module yolop.dev/core

go 1.26
