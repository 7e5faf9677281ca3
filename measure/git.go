package measure

// Git is the version-control state of the measured program, recorded by
// `popmon run`/`popmon exec` from their --git-* flags or the CI environment
// (GitLab CI, GitHub Actions). Present only when known.
type Git struct {
	// Commit is the commit hash.
	Commit string `json:"commit"`
	// Branch is the branch (or tag) name.
	Branch string `json:"branch,omitempty"`
	// Timestamp is the commit time as the CI system gives it (RFC 3339).
	Timestamp string `json:"timestamp,omitempty"`
	// IsMergeRequest says the run belongs to a merge/pull request.
	IsMergeRequest bool `json:"is_merge_request,omitempty"`
	// DefaultBranch is the repository's default branch.
	DefaultBranch string `json:"default_branch,omitempty"`
}
