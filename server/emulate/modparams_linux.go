//go:build linux

package emulate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
)

// cubicParamDir is where the kernel shows tcp_cubic's module parameters
// (built in or loaded).
var cubicParamDir = "/sys/module/tcp_cubic/parameters"

// cubicParams are the tcp_cubic module parameters the kernel side of a run
// takes: each cubic flow's cc_params over the kernel's defaults. The
// parameters are the kernel's, not a socket's, so every cubic flow must
// agree; nil when no flow runs cubic. The errors name each cc_params the
// kernel cannot take:
//   - of another CC (only tcp_cubic's are set);
//   - bic_scale, which sysfs shows read-only (0444);
//   - beta, which the running kernel would read in its loss response but
//     not in its Reno-friendly estimate, whose beta_scale cubictcp_register
//     computed at boot from the boot value (717): the simulator takes beta
//     as a boot parameter (tcp_cubic.beta on the kernel's command line).
func cubicParams(flows []config.Flow) (map[string]int64, []string) {
	var errs []string
	var want map[string]int64
	var from string // the flow want came from
	for _, f := range flows {
		p := "flows[" + f.ID + "].cc_params"
		if f.CC != "cubic" {
			if len(f.CCParams) > 0 {
				errs = append(errs, fmt.Sprintf("%s: emulation sets only tcp_cubic's module parameters, not %s's", p, f.CC))
			}
			continue
		}
		eff := map[string]int64{}
		for _, s := range cc.Params("cubic") {
			eff[s.Name] = s.Default
		}
		for _, k := range slices.Sorted(maps.Keys(f.CCParams)) {
			switch k {
			case "bic_scale":
				errs = append(errs, p+".bic_scale: the kernel shows it read-only (0444): its cubic's C was fixed at boot")
				continue
			case "beta":
				errs = append(errs, p+".beta: the running kernel would take it in its loss response but keep the Reno-friendly estimate's beta_scale it computed at boot from 717; the simulator's beta is a boot parameter (tcp_cubic.beta on the kernel's command line)")
				continue
			}
			eff[k] = f.CCParams[k]
		}
		if want == nil {
			want, from = eff, f.ID
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(eff)) {
			if eff[k] != want[k] {
				errs = append(errs, fmt.Sprintf("%s.%s: %d, but flows[%s] runs tcp_cubic with %d: the kernel's module parameters hold for every socket", p, k, eff[k], from, want[k]))
			}
		}
	}
	delete(want, "bic_scale") // read-only; beta stays: 717, since a flow that sets it is refused
	return want, errs
}

// setCubicParams writes each parameter of want that differs from the
// kernel's value (one left by an earlier run too) and pushes its
// restoration. A kernel that shows no tcp_cubic parameters (a module not
// yet loaded) runs its defaults, unless a flow set some.
func (e *run) setCubicParams(want map[string]int64, flows []config.Flow) error {
	if _, err := os.Stat(cubicParamDir); err != nil {
		for _, f := range flows {
			if f.CC == "cubic" && len(f.CCParams) > 0 {
				return fmt.Errorf("flows[%s].cc_params: the kernel shows no tcp_cubic parameters to set: %w", f.ID, err)
			}
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		path := filepath.Join(cubicParamDir, k)
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("tcp_cubic's %s: %w", k, err)
		}
		old := strings.TrimSpace(string(b))
		v := strconv.FormatInt(want[k], 10)
		if old == v {
			continue
		}
		if err := os.WriteFile(path, []byte(v), 0); err != nil {
			return fmt.Errorf("tcp_cubic's %s: %w", k, err)
		}
		e.push(func() error { return os.WriteFile(path, []byte(old), 0) })
	}
	return nil
}
