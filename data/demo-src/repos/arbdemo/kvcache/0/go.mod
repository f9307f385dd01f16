module github.com/arbdemo/kvcache

go 1.22
