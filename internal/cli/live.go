package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/session"

	"github.com/popmon/popmon/internal/outfile"
)

const recoverHelp = `Assembles the measurement of a job whose popmon run was itself killed,
from the session folder it left next to the output (.popmon-session-*) and
the processes' live files. The measurement is marked partial, says why the
job ended and up to when it was measured, and is written next to the session
folder under the name popmon run would have used (numbered when taken).
Nothing in the session folder is trusted: it must be a folder of yours, its
live folder one that popmon run makes for you (else nothing is read or
removed), and -o and --force come from the command line only.`

// recoverCmd is popmon recover SESSION.
func recoverCmd(env *Env, args []string) error {
	fs := newFlags("recover", "[-o FILE [--force]] [--format F] SESSION_FOLDER", recoverHelp, env.Stderr)
	output := fs.String("o", "", "write the measurement to `FILE` (default: next to the session folder, the name popmon run would have used)")
	force := fs.Bool("force", false, "overwrite an existing -o file")
	format := fs.String("format", "text", "report printed: text, json, csv, talp-json, omp-regions-csv, or none")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fault.Usagef("recover takes one session folder")
	}
	if err := checkFormat(*format, true); err != nil {
		return err
	}
	folder := filepath.Clean(fs.Arg(0))
	if err := session.OwnFolder(folder); err != nil {
		return fault.Inputf("%s is not a session folder of yours: %v; nothing was read or removed", folder, err)
	}
	info, err := session.ReadInfo(folder)
	var unreadable *session.UnreadableError
	if errors.As(err, &unreadable) {
		return fault.Inputf("%v", err)
	} else if err != nil {
		return fault.Inputf("%s is not a popmon run session folder with live files (%v)", folder, err)
	}
	// The session folder may be anyone's (a shared project folder, an
	// unpacked archive): its live_dir is read and removed only when it is
	// a live folder popmon run makes for this user.
	if err := session.CheckLiveDir(folder, info.LiveDir); err != nil {
		return fault.Inputf("%s: refusing its live folder %q: %v; nothing was read or removed", folder, info.LiveDir, err)
	}
	s, err := live.ScanSession(info.LiveDir, filepath.Join(folder, "nodes"))
	if err != nil {
		return fault.Inputf("%v", err)
	}
	defer s.Close()
	// A job that finished: rank 0's measurement is in the session folder,
	// or kept outside it when the folder had no room (kept.go): the whole
	// measurement, which wins over a partial one from the live files.
	var path string
	var command []string
	kept := session.FindKept(folder, info.LiveDir)
	if sess, _ := session.Read(folder, 0, kept...); sess != nil && len(sess.Files) > 0 {
		path, command = sess.Files[0].Path, sess.Files[0].Command
		if slices.Contains(kept, path) {
			fmt.Fprintf(env.Stderr, "popmon: the job finished; its measurement was kept in %s (the session folder had no room for it)\n", path)
		}
	} else {
		p, m, err := session.WritePartial(s, info, live.JobEnd{}, "recover", folder)
		if err != nil {
			return fault.Inputf("cannot recover %s: %v", folder, err)
		}
		path, command = p, m.Command
	}
	// -o and --force come from the command line only: the file's output
	// names the file's base name, written next to the session folder
	// without overwriting anything.
	target, frc := *output, *force
	if target == "" {
		frc = false
		name := filepath.Base(info.Output)
		if info.Output == "" || name == "." || name == ".." || name == string(filepath.Separator) {
			name = outfile.DefaultName(command)
		}
		target = filepath.Join(filepath.Dir(folder), filepath.Base(name))
	}
	view, viewed := session.ReadBack(path, target) // -o /dev/null: the report all the same
	defer viewed()
	var final string
	if frc {
		final, err = outfile.Replace(path, target)
	} else {
		final, err = outfile.PublishNumbered(path, target)
	}
	if err != nil {
		return fault.Envf("cannot write %s: %v; the measurement is in %s", target, err, path)
	}
	fmt.Fprintf(env.Stderr, "popmon: measurement written to %s\n", final)
	if *format != "none" {
		if err := renderFile(env, env.Stderr, session.Shown(view, final), *format, reportOptions{model: "talp"}); err != nil {
			fmt.Fprintf(env.Stderr, "popmon: %v\n", err)
		}
	}
	os.RemoveAll(info.LiveDir)
	os.RemoveAll(folder)
	return nil
}
