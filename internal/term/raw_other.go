//go:build !linux

package term

import "errors"

// RawMode is not supported here: popmon top then takes no keys.
func RawMode(fd int) (func(), error) {
	return nil, errors.New("no terminal control on this system")
}
