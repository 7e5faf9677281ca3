package cli

import (
	"io"

	"github.com/popmon/popmon/internal/fault"
	"github.com/popmon/popmon/internal/patterns"

	"github.com/popmon/popmon/internal/outfile"
)

// reportPatterns is `popmon report --patterns`: the wait states and the
// critical path of a trace (see loadTrace), as text or JSON.
func reportPatterns(env *Env, path, format, output string, force bool, opt inputOptions) error {
	if format != "text" && format != "json" {
		return fault.Usagef("--patterns prints text or json, not %s", format)
	}
	var out *outfile.File
	if output != "" {
		var err error
		if out, err = outfile.Create(output, force); err != nil {
			return err
		}
		defer out.Abort()
	}
	tr, err := loadTrace(path, opt)
	if err != nil {
		return err
	}
	res, err := patterns.Analyze(tr, patterns.Options{})
	if err != nil {
		return fault.Inputf("%s: %v", path, err)
	}
	var w io.Writer = env.Stdout
	if out != nil {
		w = out
	}
	if format == "json" {
		err = patterns.WriteJSON(w, path, res)
	} else {
		err = patterns.WriteText(w, path, res)
	}
	if err != nil {
		return fault.Failf("%v", err)
	}
	if out != nil {
		return out.Commit()
	}
	return nil
}
