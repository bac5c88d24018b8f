module yolop.dev/registry/cratesio

go 1.26
