module yolop.dev/sdk/python

go 1.26
