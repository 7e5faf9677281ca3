// Command liveread reads every live file of a folder at a given rate until
// it is interrupted, as popmon run's sampler does: the reader of `make
// bench`'s "live file with a reader" rows.
//
//	liveread DIR HZ
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/live"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: liveread DIR HZ")
		os.Exit(2)
	}
	hz, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil || hz <= 0 || hz > 1000 {
		fmt.Fprintln(os.Stderr, "liveread: HZ must be a number in (0, 1000]")
		os.Exit(2)
	}
	s := live.NewSampler(os.Args[1], time.Duration(float64(time.Second)/hz))
	s.Start()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	s.Stop()
	s.Close()
}
