// Package fault is the error the packages below the command line return
// when what went wrong decides popmon's exit code: a bad option (Usage),
// something this machine lacks (Env), an input that cannot be used (Input),
// a failure (Failure), a measurement not written where asked (NotWritten),
// a command that cannot be run (NotFound, NotExec), or the measured job's
// own failing end (Job). The command line maps the kind to its exit code, in
// one place; the packages only say which kind it is.
package fault

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"
)

// Kind is what kind of fault an error is.
type Kind int

// The kinds.
const (
	Failure Kind = iota
	Usage
	Env
	Input
	// NotWritten: popmon run could not write a measurement where asked
	// (kept elsewhere, or lost to a full file system).
	NotWritten
	// NotFound: the command to run does not exist; NotExec: it exists but
	// cannot be executed (as a POSIX shell tells them apart).
	NotFound
	NotExec
	// Job: the measured job ended with an exit code other than 0 (Code)
	// or by a signal (Signal), which popmon's own ending repeats.
	Job
)

// Error is an error of a kind.
type Error struct {
	Kind Kind
	Err  error
	// Code and Signal are a Job's exit code and the signal that ended it
	// (0 for none).
	Code   int
	Signal syscall.Signal
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef, Envf, Inputf and Failf format an error of their kind.
func Usagef(format string, a ...any) error { return &Error{Kind: Usage, Err: fmt.Errorf(format, a...)} }
func Envf(format string, a ...any) error   { return &Error{Kind: Env, Err: fmt.Errorf(format, a...)} }
func Inputf(format string, a ...any) error { return &Error{Kind: Input, Err: fmt.Errorf(format, a...)} }
func Failf(format string, a ...any) error {
	return &Error{Kind: Failure, Err: fmt.Errorf(format, a...)}
}

// Silent is an error of kind whose message was said already (or needs
// none): the command line prints no line for it.
func Silent(kind Kind) error { return &Error{Kind: kind, Err: errors.New("")} }

// JobEnded is the error of a measured job that exited with code (not 0) or
// was ended by sig (not 0): nil for a job that exited with 0.
func JobEnded(code int, sig syscall.Signal) error {
	if code == 0 && sig == 0 {
		return nil
	}
	return &Error{Kind: Job, Err: errors.New(""), Code: code, Signal: sig}
}

// NotRunnable is the error of a command that could not be started (err):
// NotFound when it does not exist, NotExec when it exists but cannot be
// executed (a folder, a file without execute permission, an unknown
// format), as a POSIX shell tells them apart.
func NotRunnable(err error, format string, a ...any) error {
	kind := NotExec
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		kind = NotFound
	}
	return &Error{Kind: kind, Err: fmt.Errorf(format, a...)}
}

// KindOf is the kind of err's first fault in its chain, and whether it has
// one.
func KindOf(err error) (Kind, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return Failure, false
}
