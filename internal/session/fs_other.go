//go:build !linux

package session

import "errors"

var sharedFS = map[string]bool{}

// FSInfo: the live files need Linux.
func FSInfo(path string) (kind string, free uint64, err error) {
	return "", 0, errors.New("live files need Linux")
}
