package engine

import (
	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
)

// Prepared is a scenario ready to build: its canonical JSON (after
// overrides), the config hash checkpoints carry, and the parsed Scenario.
type Prepared struct {
	Canonical []byte
	Hash      string
	Scenario  *config.Scenario
	// Notes warn of overrides that did what they say but perhaps not what
	// was meant (config.ApplyNoted): a command prints them.
	Notes []string
}

// CCChecks are the parse options that hold a scenario's flows to the
// algorithms this engine has: their names, each module parameter, and a
// flow's parameters together.
func CCChecks() []config.Option {
	return []config.Option{config.WithCCs(cc.Names()), config.WithCCParams(cc.CheckParam), config.WithCCParamSet(cc.CheckParams)}
}

// Prepare applies --set style overrides to raw scenario JSON, validates it
// against the algorithms this engine has, and computes its canonical form
// and hash. opts add parse options (config.WithDir for a scenario file that
// names trace files). Errors are *config.Errors naming every bad field.
func Prepare(raw []byte, sets []string, opts ...config.Option) (*Prepared, error) {
	var notes []string
	if len(sets) > 0 {
		var err error
		if raw, notes, err = config.ApplyNoted(raw, sets); err != nil {
			return nil, err
		}
	}
	scn, err := config.Parse(raw, append(CCChecks(), opts...)...)
	if err != nil {
		return nil, err
	}
	return &Prepared{Canonical: scn.Canonical(), Hash: scn.Hash(), Scenario: scn, Notes: notes}, nil
}
