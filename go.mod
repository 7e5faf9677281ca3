module github.com/popmon/popmon

go 1.26.8
