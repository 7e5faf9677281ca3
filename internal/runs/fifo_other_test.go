//go:build !linux

package runs

import "errors"

// mkfifo is not tried off Linux.
func mkfifo(string) error { return errors.New("no mkfifo here") }
