package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/credohq/credo/cmd/internal/app"
	"github.com/credohq/credo/internal/config"
	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/redact"
	"github.com/credohq/credo/transcript"
)

// The organisations' policies:
//
//	beliefs policy set --scope-prefix P [--instructions TEXT] [--redact-pattern NAME=REGEX]... [--redact KINDS] [--json]
//	beliefs policy show [--scope S] [--json]
//	beliefs policy unset --scope-prefix P
//	beliefs policy apply --scope-prefix P [--dry-run] [--json]
//
// A scope's policy is the one of its longest prefix. set replaces the prefix's policy,
// for what is enqueued and extracted afterwards; apply redacts what is stored already.

func policyCommands() []command {
	return []command{policySetCommand(), policyShowCommand(), policyUnsetCommand(), policyApplyCommand()}
}

// patternFlags collects --redact-pattern NAME=REGEX, checked as they are given.
type patternFlags []redact.Pattern

func (p *patternFlags) String() string { return "" }

func (p *patternFlags) Set(v string) error {
	pt, err := redact.ParsePattern(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), redact.ErrPattern.Error()+": "))
	}
	*p = append(*p, pt)
	return nil
}

// policyPrefix reads --scope-prefix: "*" or an empty prefix given as such is every
// scope; it must be given.
func policyPrefix(fs *flag.FlagSet, prefix string) (string, error) {
	if !isFlagSet(fs, "scope-prefix") {
		return "", config.Usagef("--scope-prefix is required (\"*\" for every scope)")
	}
	if prefix == "*" || prefix == "" {
		return "", nil
	}
	return prefix, checkInput(transcript.CheckScope("--scope-prefix", prefix))
}

func policySetCommand() command {
	return command{name: "policy set", usage: "set an organisation's policy: instructions to extraction, what to redact", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			prefix := fs.String("scope-prefix", "", "the scopes governed: every scope starting with P, e.g. acme/ (\"*\": every scope) (required)")
			instructions := fs.String("instructions", "", "what extraction and consolidation of these scopes should keep or leave out (at most 2,000 characters)")
			var patterns patternFlags
			fs.Var(&patterns, "redact-pattern", "NAME=REGEX: redact the organisation's own secrets too, as [redacted NAME] (RE2; repeat the flag for more)")
			kinds := fs.String("redact", "", "the kinds of secret redacted in these scopes: all, none, or some of card,iban,api_key,token,private_key,password (default: REDACT's)")
			asJSON := fs.Bool("json", false, "print the policy as JSON")
			return func(ctx context.Context, e *env) error {
				p, err := policyPrefix(fs, *prefix)
				if err != nil {
					return err
				}
				pol := memory.Policy{ScopePrefix: p, Instructions: *instructions, Patterns: patterns}
				if isFlagSet(fs, "redact") {
					set, err := redact.ParseSet(*kinds)
					if err != nil {
						return config.Usagef("--redact: %s", err)
					}
					pol.Redact = &set
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				stored, err := store.SetPolicy(ctx, pol)
				if err != nil {
					return checkInput(err)
				}
				if *asJSON {
					return printJSON(e.stdout, stored)
				}
				fmt.Fprintf(e.stdout, "policy of %s set; it applies to what is enqueued from now on (`beliefs policy apply --scope-prefix %s` redacts what is stored)\n",
					prefixName(stored.ScopePrefix), shellQuote(stored.ScopePrefix))
				printPolicy(e, stored)
				return nil
			}
		}}
}

func policyShowCommand() command {
	return command{name: "policy show", usage: "the policies, or the one in force in a scope and where it comes from", groups: config.GroupDB | config.GroupJobs,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			scope := fs.String("scope", "", "show the policy in force in this scope")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				if isFlagSet(fs, "scope") {
					return showPolicyFor(ctx, e, *scope, *asJSON)
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				ps, err := store.Policies(ctx)
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, ps)
				}
				if len(ps) == 0 {
					fmt.Fprintf(e.stdout, "no policy: every scope redacts REDACT's kinds (%s) and extraction gets no instructions\n", e.cfg.Redact)
					return nil
				}
				tw := table(e.stdout, "PREFIX", "REDACT", "PATTERNS", "INSTRUCTIONS", "UPDATED")
				for _, p := range ps {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", prefixName(p.ScopePrefix), kindsOf(p, e.cfg.Redact), patternNames(p.Patterns),
						clip(strings.Join(strings.Fields(p.Instructions), " ")), p.UpdatedAt.Format("2006-01-02 15:04"))
				}
				return tw.Flush()
			}
		}}
}

// showPolicyFor prints the policy in force in scope, and where it comes from.
func showPolicyFor(ctx context.Context, e *env, scope string, asJSON bool) error {
	store, err := e.openScope(ctx, scope)
	if err != nil {
		return err
	}
	p, err := store.PolicyFor(ctx, scope)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e.stdout, struct {
			Scope  string         `json:"scope"`
			Policy *memory.Policy `json:"policy"`
		}{scope, p})
	}
	if p == nil {
		fmt.Fprintf(e.stdout, "no policy in force in %q: it redacts REDACT's kinds (%s) and extraction gets no instructions\n", scope, e.cfg.Redact)
		return nil
	}
	fmt.Fprintf(e.stdout, "policy in force in %q: the one of %s\n", scope, prefixName(p.ScopePrefix))
	printPolicy(e, p)
	return nil
}

func policyUnsetCommand() command {
	return command{name: "policy unset", usage: "remove the policy of a scope prefix", groups: config.GroupDB,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			prefix := fs.String("scope-prefix", "", "the prefix whose policy to remove (required)")
			return func(ctx context.Context, e *env) error {
				p, err := policyPrefix(fs, *prefix)
				if err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				if _, err := store.DeletePolicy(ctx, p); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "policy of %s removed\n", prefixName(p))
				return nil
			}
		}}
}

func policyApplyCommand() command {
	return command{name: "policy apply", usage: "redact what is stored under a prefix with the policies in force", groups: config.GroupDB | config.GroupJobs,
		flags: func(fs *flag.FlagSet) func(context.Context, *env) error {
			prefix := fs.String("scope-prefix", "", "redact the scopes starting with P (\"*\": every scope) (required)")
			dryRun := fs.Bool("dry-run", false, "count what would be redacted, and change nothing")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, e *env) error {
				p, err := policyPrefix(fs, *prefix)
				if err != nil {
					return err
				}
				store, err := e.open(ctx)
				if err != nil {
					return err
				}
				base, err := app.Redactor(e.cfg)
				if err != nil {
					return err
				}
				out, err := store.ApplyPolicy(ctx, p, base, *dryRun)
				if err != nil {
					return err
				}
				if *asJSON {
					return printJSON(e.stdout, out)
				}
				verb := "redacted"
				if *dryRun {
					verb = "would redact (dry run, nothing changed)"
				}
				total := 0
				for _, n := range out.Counts {
					total += n
				}
				fmt.Fprintf(e.stdout, "%s %d %s in %d %s under %s\n", verb, total, plural(total, "secret"), len(out.Scopes),
					plural(len(out.Scopes), "scope"), prefixName(p))
				if total == 0 {
					return nil
				}
				tw := table(e.stdout, "SCOPE", "ROWS", "SECRETS")
				for _, s := range out.Scopes {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Scope, countsText(s.Rows), countsText(s.Counts))
				}
				return tw.Flush()
			}
		}}
}

// printPolicy prints what a policy says, one line each.
func printPolicy(e *env, p *memory.Policy) {
	fmt.Fprintf(e.stdout, "  redact: %s\n", kindsOf(p, e.cfg.Redact))
	fmt.Fprintf(e.stdout, "  patterns: %s\n", patternNames(p.Patterns))
	for _, pt := range p.Patterns {
		fmt.Fprintf(e.stdout, "    %s=%s\n", pt.Name, pt.Regex)
	}
	if p.Instructions == "" {
		fmt.Fprintln(e.stdout, "  instructions: none")
		return
	}
	fmt.Fprintln(e.stdout, "  instructions:")
	for line := range strings.SplitSeq(p.Instructions, "\n") {
		fmt.Fprintf(e.stdout, "    %s\n", line)
	}
}

// kindsOf is what a policy redacts: its own kinds, or REDACT's (def; nil when the
// command did not read it).
func kindsOf(p *memory.Policy, def redact.Set) string {
	if p.Redact != nil {
		return p.Redact.String()
	}
	if def == nil {
		return "REDACT's"
	}
	return def.String() + " (REDACT's)"
}

func patternNames(ps []redact.Pattern) string {
	if len(ps) == 0 {
		return "none"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// countsText is counts as "key N, key N", in order.
func countsText(counts map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, k+" "+strconv.Itoa(counts[k]))
	}
	return strings.Join(parts, ", ")
}

// prefixName names a prefix in a sentence: quoted, or every scope.
func prefixName(prefix string) string {
	if prefix == "" {
		return "every scope (\"*\")"
	}
	return strconv.Quote(prefix)
}

// shellQuote is prefix as a shell argument, "*" for every scope.
func shellQuote(prefix string) string {
	if prefix == "" {
		prefix = "*"
	}
	return "'" + strings.ReplaceAll(prefix, "'", `'\''`) + "'"
}
