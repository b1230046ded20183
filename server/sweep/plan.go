package sweep

import (
	"strings"

	"github.com/ccscope/ccscope/engine"
)

// Planned is one point of a sweep as Run would take it, not run.
type Planned struct {
	Point Point
	// Sets are the point's overrides in the order they apply (Point.Sets).
	Sets []string
	// Hash is the config hash of the point's scenario.
	Hash string
	// Status is what Run would do with the point: PlanRun, PlanShared or
	// PlanCatalogued.
	Status string
}

// What Run does with a planned point.
const (
	PlanRun        = "run"        // the first point of its scenario, not in the catalog
	PlanShared     = "shared"     // its scenario is run for another point, or is in the catalog under another axis: the rows are copied
	PlanCatalogued = "catalogued" // in the catalog under its axis: skipped
)

// Plan expands and checks spec as Run does (every invalid point is
// named, as there) and prepares each point without running it: what it
// would set, the config hash it would run, and whether Run would run it,
// share another point's run, or skip it as catalogued in opt.Catalog
// (which need not exist). A tool can then run the points elsewhere (the
// Python client's Dask sweep) and catalog them as Run would.
func Plan(spec *Spec, opt Options) ([]Planned, error) {
	base, err := scenarioBytes(spec.Scenario, opt.Load)
	if err != nil {
		return nil, err
	}
	points := spec.Points()
	hashes, err := validate(spec, points, base, opt)
	if err != nil {
		return nil, err
	}
	var have catalogued
	if opt.Catalog != "" {
		if _, have, err = resume(spec, opt.Catalog); err != nil {
			return nil, err
		}
	}
	planned := make(map[string]bool) // hashes this sweep runs or has
	out := make([]Planned, len(points))
	for i, p := range points {
		sets := p.Sets(spec)
		hash, err := pointHash(p, sets, hashes, base, opt)
		if err != nil {
			return nil, err
		}
		st := PlanRun
		switch {
		case have.keys[hash+"\x00"+p.Axis]:
			st = PlanCatalogued
		case planned[hash] || len(have.rows[hash]) > 0:
			st = PlanShared
		}
		planned[hash] = true
		out[i] = Planned{Point: p, Sets: sets, Hash: hash, Status: st}
	}
	return out, nil
}

// pointHash is the config hash of point p with overrides sets: validate's,
// for a point without a seed of its own, whose sets validate prepared.
func pointHash(p Point, sets []string, validated map[string]string, base []byte, opt Options) (string, error) {
	if !p.HasSeed {
		return validated[strings.Join(sets, "\x00")], nil
	}
	prep, err := engine.Prepare(base, sets, opt.Config...)
	if err != nil {
		return "", &PointError{Point: p, Err: err} // a seed validate left out: not expected
	}
	return prep.Hash, nil
}
