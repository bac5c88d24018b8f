module yolop.dev/extensions/lsp

go 1.26
