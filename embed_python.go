package popmon

import (
	"embed"
	"io/fs"
)

// The Python modules measured programs import (docs/python.md): popmon's
// region API and the answer to DLB/TALP's Python bindings, which popmon
// run/exec put on the job's PYTHONPATH next to the library.
//
//go:embed python/*.py python/popmon/*.py
var pythonFiles embed.FS

// PythonModules returns the Python modules by path (dlb.py,
// popmon/__init__.py, ...).
func PythonModules() fs.FS {
	sub, err := fs.Sub(pythonFiles, "python")
	if err != nil {
		panic(err) // unreachable: the directory is embedded above
	}
	return sub
}
