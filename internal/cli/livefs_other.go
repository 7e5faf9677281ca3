//go:build !linux

package cli

import "errors"

var sharedFS = map[string]bool{}

// fsInfo: the live files need Linux.
func fsInfo(path string) (kind string, free uint64, err error) {
	return "", 0, errors.New("live files need Linux")
}
