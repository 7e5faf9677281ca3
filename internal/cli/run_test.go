package cli

import (
	"strings"
	"testing"
)

func TestDefaultOutputName(t *testing.T) {
	got := defaultOutputName([]string{"/path/to/my app"})
	if !strings.HasPrefix(got, "popmon-my_app-") || !strings.HasSuffix(got, ".json") {
		t.Errorf("defaultOutputName = %q", got)
	}
}
