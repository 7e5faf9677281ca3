module github.com/popmon/popmon

go 1.22
