module yolop.dev/sdk/typescript

go 1.26
