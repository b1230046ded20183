package engine

import (
	"fmt"

	"github.com/ccscope/ccscope/engine/cc"
	"github.com/ccscope/ccscope/engine/config"
	"github.com/ccscope/ccscope/engine/link"
	"github.com/ccscope/ccscope/engine/qdisc"
	"github.com/ccscope/ccscope/engine/sim"
	"github.com/ccscope/ccscope/engine/units"
)

// Action changes a parameter of a running simulation at the current instant.
// Exactly one target (Link+Dir or Flow) and at least one value are set.
type Action struct {
	Link string `json:"link,omitempty" msgpack:"link,omitempty"`
	Dir  string `json:"dir,omitempty" msgpack:"dir,omitempty"` // "ab" or "ba"
	Flow string `json:"flow,omitempty" msgpack:"flow,omitempty"`

	Rate  *units.BitRate `json:"rate,omitempty" msgpack:"rate,omitempty"`
	Delay *sim.Duration  `json:"delay,omitempty" msgpack:"delay,omitempty"`
	LossP *float64       `json:"loss,omitempty" msgpack:"loss,omitempty"`
	// Duplicate replaces the direction's duplicate fraction (0: none).
	Duplicate *float64 `json:"duplicate,omitempty" msgpack:"duplicate,omitempty"`
	// LossModel, JitterModel and Capacity replace the direction's model
	// whole; Outage takes it down from now for that long. Scheduled changes
	// reach them; LossP is the wire form of a Bernoulli LossModel.
	LossModel   *config.Loss       `json:"-" msgpack:"-"`
	JitterModel *config.Jitter     `json:"-" msgpack:"-"`
	Capacity    *config.Capacity   `json:"-" msgpack:"-"`
	Outage      *sim.Duration      `json:"-" msgpack:"-"`
	QueueLimit  *config.QueueLimit `json:"queue_limit,omitempty" msgpack:"queue_limit,omitempty"`
	CwndPkts    *uint32            `json:"cwnd,omitempty" msgpack:"cwnd,omitempty"`
	PacingRate  *units.BitRate     `json:"pacing_rate,omitempty" msgpack:"pacing_rate,omitempty"`
}

// FlowActor is a flow that accepts actions (a TCP sender: cwnd, pacing rate).
type FlowActor interface {
	Act(a Action) error
}

// Act applies a at the current instant.
func (r *Run) Act(a Action) error {
	switch {
	case a.Flow != "" && a.Link != "":
		return fmt.Errorf("engine: action names both link %q and flow %q; name one", a.Link, a.Flow)
	case a.Flow != "":
		i, ok := r.FlowIndex(a.Flow)
		if !ok {
			return fmt.Errorf("engine: action.flow: no flow %q", a.Flow)
		}
		fa, ok := r.Flows[i].(FlowActor)
		if !ok {
			// Not a leg (legs, past the scenario's flows, are TCP).
			return fmt.Errorf("engine: flow %q (%s) takes no actions", a.Flow, r.Scenario.Flows[i].CC)
		}
		return fa.Act(a)
	case a.Link != "":
		d, ok := r.Net.Dir(a.Link, a.Dir)
		if !ok {
			return fmt.Errorf("engine: action: no link direction %q %q (dir is \"ab\" or \"ba\")", a.Link, a.Dir)
		}
		if a.Rate == nil && a.Delay == nil && a.LossP == nil && a.QueueLimit == nil &&
			a.LossModel == nil && a.JitterModel == nil && a.Capacity == nil && a.Outage == nil && a.Duplicate == nil {
			return fmt.Errorf("engine: action on link %q sets nothing (rate, delay, loss, duplicate or queue_limit)", a.Link)
		}
		if a.Duplicate != nil && !(*a.Duplicate >= 0 && *a.Duplicate <= 1) {
			return fmt.Errorf("engine: action.duplicate: %v is not a probability in [0, 1]", *a.Duplicate)
		}
		if a.Outage != nil && *a.Outage <= 0 {
			return fmt.Errorf("engine: action.outage: %v is not positive", *a.Outage)
		}
		if a.Rate != nil && *a.Rate <= 0 {
			return fmt.Errorf("engine: action.rate: %d bps is not positive", *a.Rate)
		}
		if a.Delay != nil && *a.Delay < 0 {
			return fmt.Errorf("engine: action.delay: %v is negative", *a.Delay)
		}
		if a.LossP != nil && !(*a.LossP >= 0 && *a.LossP <= 1) {
			return fmt.Errorf("engine: action.loss: %v is not a probability in [0, 1]", *a.LossP)
		}
		if a.QueueLimit != nil {
			ls, ok := d.Qdisc().(qdisc.Limiter)
			if !ok {
				return fmt.Errorf("engine: action.queue_limit: the qdisc of %s cannot change its limit", d.Name)
			}
			if a.QueueLimit.MilliBDPs > 0 {
				return fmt.Errorf("engine: action.queue_limit: give bytes or packets, not BDPs, mid-run")
			}
			if _, fifo := ls.(*qdisc.FIFO); *a.QueueLimit == (config.QueueLimit{}) && !fifo {
				return fmt.Errorf("engine: action.queue_limit: \"unlimited\" is for a fifo; the qdisc of %s holds at most a limit, as its kernel qdisc does", d.Name)
			}
			if err := r.Net.CheckByteLimit(d, a.QueueLimit.Bytes); err != nil {
				return fmt.Errorf("engine: action.queue_limit: %d B is %w", a.QueueLimit.Bytes, err)
			}
			if err := ls.SetLimit(a.QueueLimit.Bytes, int(a.QueueLimit.Packets)); err != nil {
				return fmt.Errorf("engine: action.queue_limit: %w", err)
			}
			if tr, ok := ls.(qdisc.Trimmer); ok {
				tr.Trim(r.Sim.Now())
			}
		}
		if a.Rate != nil {
			d.SetRate(*a.Rate)
		}
		if a.Delay != nil {
			d.SetDelay(*a.Delay)
		}
		if a.LossP != nil {
			d.SetLoss(config.Loss{Kind: config.Bernoulli, P: *a.LossP})
		}
		if a.LossModel != nil {
			d.SetLoss(*a.LossModel)
		}
		if a.JitterModel != nil {
			d.SetJitter(*a.JitterModel)
		}
		if a.Capacity != nil {
			d.SetCapacity(a.Capacity)
		}
		if a.Outage != nil {
			d.AddOutage(*a.Outage)
		}
		if a.Duplicate != nil {
			d.SetDuplicate(*a.Duplicate)
			if *a.Duplicate > 0 && !r.copies {
				r.copies = true
				for _, f := range r.Flows {
					if pf, ok := f.(pumpFlow); ok {
						pf.p.ExpectCopies()
					}
				}
			}
		}
		return nil
	}
	return fmt.Errorf("engine: action names no target; give link and dir, or flow")
}

const (
	kindChange   sim.Kind = 1
	kindAnnounce sim.Kind = 2
)

// changer applies the scenario's scheduled changes at their times.
type changer struct {
	run  *Run
	self int32
}

func (c *changer) init(r *Run) {
	c.run = r
	c.self = r.Sim.Register(c, "changes")
	// Announcements first, so one due at its change's instant (a zero
	// lead) precedes it; without announce leads nothing here is scheduled.
	for i, ch := range r.Scenario.Changes {
		if ch.Announce != nil {
			r.Sim.Schedule(sim.Time(ch.At-*ch.Announce), c.self, kindAnnounce, uint64(i))
		}
	}
	for i, ch := range r.Scenario.Changes {
		r.Sim.Schedule(sim.Time(ch.At), c.self, kindChange, uint64(i))
	}
}

// Handle applies one scheduled change or announces one.
func (c *changer) Handle(ev sim.Event) {
	ch := c.run.Scenario.Changes[ev.Arg]
	if ev.Kind == kindAnnounce {
		c.announce(ch.Link)
		return
	}
	a := Action{Link: ch.Link, Dir: ch.Dir, Rate: ch.Rate, Delay: ch.Delay,
		LossModel: ch.Loss, JitterModel: ch.Jitter, Capacity: ch.Capacity, Outage: ch.Outage, Duplicate: ch.Duplicate}
	if err := c.run.Act(a); err != nil {
		// The scenario was validated, so a failure here is an engine bug.
		panic(fmt.Sprintf("engine: scheduled change %d at %v: %v", ev.Arg, ev.At, err))
	}
}

// announce tells every running TCP flow whose data or ACK route crosses link
// (either direction) that a disruption of it is predicted: the link layer's
// handover report of SaTCP (LeoEM's report_relay). A split flow's legs are
// told as their own routes cross it. Flows are told in index order.
func (c *changer) announce(link string) {
	r := c.run
	for _, fl := range r.Flows {
		t, ok := fl.(*tcpFlow)
		if !ok || t.snd == nil {
			continue
		}
		src, dst := r.Net.Node(t.cfg.Src).Index, r.Net.Node(t.cfg.Dst).Index
		if crosses(r.Net.Path(src, dst), link) || crosses(r.Net.Path(dst, src), link) {
			t.Announce(cc.EventHandover)
		}
	}
}

// crosses reports whether a route uses a direction of link.
func crosses(route []*link.Dir, id string) bool {
	for _, d := range route {
		if d.Name == id+"/ab" || d.Name == id+"/ba" {
			return true
		}
	}
	return false
}
