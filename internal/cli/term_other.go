//go:build !linux

package cli

import "errors"

// rawMode is not supported here: popmon top then takes no keys.
func rawMode(fd int) (func(), error) {
	return nil, errors.New("no terminal control on this system")
}
