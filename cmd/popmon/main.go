// Command popmon measures how efficiently MPI programs use their resources
// and explains the loss in POP metrics. See 'popmon help'.
package main

import (
	"os"

	"github.com/popmon/popmon/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, RaiseSignals: true}))
}
