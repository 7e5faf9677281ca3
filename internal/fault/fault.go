// Package fault is the error the packages below the command line return
// when what went wrong decides popmon's exit code: a bad option (Usage),
// something this machine lacks (Env), an input that cannot be used (Input),
// or a failure (Failure). The command line maps the kind to its exit code;
// the packages only say which kind it is.
package fault

import (
	"errors"
	"fmt"
)

// Kind is what kind of fault an error is.
type Kind int

// The kinds.
const (
	Failure Kind = iota
	Usage
	Env
	Input
)

// Error is an error of a kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef, Envf, Inputf and Failf format an error of their kind.
func Usagef(format string, a ...any) error { return &Error{Usage, fmt.Errorf(format, a...)} }
func Envf(format string, a ...any) error   { return &Error{Env, fmt.Errorf(format, a...)} }
func Inputf(format string, a ...any) error { return &Error{Input, fmt.Errorf(format, a...)} }
func Failf(format string, a ...any) error  { return &Error{Failure, fmt.Errorf(format, a...)} }

// KindOf is the kind of err's first fault in its chain, and whether it has
// one.
func KindOf(err error) (Kind, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return Failure, false
}
