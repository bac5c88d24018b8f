module yolop.dev/registry/git

go 1.26
