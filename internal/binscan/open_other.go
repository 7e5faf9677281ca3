//go:build !unix

package binscan

import "os"

// openNonblock opens path read-only.
func openNonblock(path string) (*os.File, error) {
	return os.Open(path)
}
