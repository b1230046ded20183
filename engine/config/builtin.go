package config

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

//go:embed scenarios/*.json scenarios/traces/*.trace
var builtinFS embed.FS

// Info names a built-in scenario.
type Info struct {
	Name        string
	Description string
}

// Builtins lists the built-in scenarios, sorted by name.
func Builtins() []Info {
	entries, err := builtinFS.ReadDir("scenarios")
	if err != nil {
		panic("config: reading embedded scenarios: " + err.Error())
	}
	var out []Info
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		raw, err := builtinFS.ReadFile(path.Join("scenarios", e.Name()))
		if err != nil {
			panic("config: reading embedded scenario: " + err.Error())
		}
		var head struct{ Name, Description string }
		if err := json.Unmarshal(raw, &head); err != nil {
			panic("config: embedded scenario " + e.Name() + ": " + err.Error())
		}
		out = append(out, Info{Name: strings.TrimSuffix(e.Name(), ".json"), Description: head.Description})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Builtin returns the JSON of the named built-in scenario, ready for Apply
// and Parse.
func Builtin(name string) ([]byte, error) {
	raw, err := builtinFS.ReadFile(path.Join("scenarios", name+".json"))
	if err != nil || strings.ContainsAny(name, "/\\") {
		names := []string{}
		for _, b := range Builtins() {
			names = append(names, b.Name)
		}
		return nil, fmt.Errorf("config: no built-in scenario %q; built-ins: %s", name, strings.Join(names, ", "))
	}
	return raw, nil
}
