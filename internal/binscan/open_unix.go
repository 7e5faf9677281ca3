//go:build unix

package binscan

import (
	"os"
	"syscall"
)

// openNonblock opens path read-only without blocking on a FIFO that was
// put where a regular file was seen.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
