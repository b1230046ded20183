package engine

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/link"
)

// TapArrivals interposes a receiver on the far end of a link direction
// (dir "ab" or "ba"): wrap gets the node the packets arrive at and returns
// the receiver the direction hands them to instead, which must pass each
// packet on. A pcap writer uses it to see every packet that crosses the
// direction; a run without a tap pays nothing. Call it before the run
// starts.
func (r *Run) TapArrivals(linkID, dir string, wrap func(next link.Receiver) link.Receiver) error {
	d, ok := r.Net.Dir(linkID, dir)
	if !ok {
		return fmt.Errorf("engine: no link direction %s/%s", linkID, dir)
	}
	for _, l := range r.Scenario.Links {
		if l.ID != linkID {
			continue
		}
		far := l.B
		if dir == "ba" {
			far = l.A
		}
		d.Connect(wrap(r.Net.Node(far)))
		return nil
	}
	return fmt.Errorf("engine: no link %s", linkID)
}
