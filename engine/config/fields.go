package config

// valueKind is the JSON type a scenario key takes once units are parsed.
type valueKind uint8

const (
	kObject     valueKind = iota // a JSON object with known keys
	kList                        // a JSON array of objects
	kString                      // free text or a name
	kBool                        // true or false
	kProb                        // a number in [0, 1]
	kCount                       // a plain non-negative integer
	kDuration                    // "40ms" or integer picoseconds
	kRate                        // "100Mbps" or integer bits per second
	kSize                        // "1500B" or integer bytes
	kLimit                       // a size, "100p" or "1BDP"
	kQueueLimit                  // a kLimit or "unlimited"
	kBuffer                      // a size or "unlimited"
	kDurations                   // a JSON array of durations (quantiles, smallest first)
	kPacing                      // true, false or "auto"
	kNumber                      // a positive finite number
	kMatrix                      // an array of arrays of probabilities
	kTexts                       // an object of strings under free keys
	kEnds                        // a node id, a list of them, or a per-flow host object
	kStart                       // a duration or a start distribution object
	kFlowSize                    // a size or a size distribution object
	kPerSecond                   // an arrival rate: "200/s" or a positive number per second
	kCDF                         // an array of [size, probability] points
	kCCParams                    // a CC's module parameters: integers or booleans under free keys
)

// shape is one node of the scenario format's known-field table. The decoder
// reads only keys listed here, reports every other key as unknown, and --set
// walks the same table, so the format has exactly one definition in Go; a
// test holds proto/scenario.schema.json to it.
type shape struct {
	kind   valueKind
	fields map[string]*shape // kObject: the known keys
	elem   *shape            // kList: the element object
	byID   bool              // kList: elements are addressed by their "id"
	// alt is the object form of a value that may also be written plainly
	// (a group's src as a node id or as a host object, outages as a list
	// or as an object): --set reaches its fields while the value is in
	// that form.
	alt *shape
}

func leaf(k valueKind) *shape { return &shape{kind: k} }

// union is a value of kind k that may also be written as an alt object.
func union(k valueKind, alt *shape) *shape { return &shape{kind: k, alt: alt} }

func object(fields map[string]*shape) *shape { return &shape{kind: kObject, fields: fields} }

var (
	qdiscShape = object(map[string]*shape{
		"kind": leaf(kString), "limit": leaf(kQueueLimit),
		"ecn_threshold": leaf(kLimit), "target": leaf(kDuration), "interval": leaf(kDuration),
		"ecn": leaf(kBool), "ce_threshold": leaf(kDuration), "flows": leaf(kCount),
		"quantum": leaf(kSize), "tupdate": leaf(kDuration), "step_threshold": leaf(kDuration),
		"coupling": leaf(kCount), "c_protection": leaf(kCount), "initial_quantum": leaf(kSize),
		"flow_limit": leaf(kCount), "horizon": leaf(kDuration),
		"alpha": leaf(kCount), "beta": leaf(kCount), "bytemode": leaf(kBool), "dq_rate_estimator": leaf(kBool),
		"ecn_prob": leaf(kCount),
	})
	lossShape = object(map[string]*shape{
		"kind": leaf(kString), "position": leaf(kString), "p": leaf(kProb),
		"p_gb": leaf(kProb), "p_bg": leaf(kProb), "loss_good": leaf(kProb), "loss_bad": leaf(kProb),
		"every": leaf(kCount), "train_length": leaf(kNumber),
	})
	jitterShape = object(map[string]*shape{
		"kind": leaf(kString), "order": leaf(kString), "clamp": leaf(kString), "sigma": leaf(kDuration),
		"min": leaf(kDuration), "max": leaf(kDuration), "scale": leaf(kDuration), "shape": leaf(kNumber),
		"cap": leaf(kDuration), "period": leaf(kDuration), "length": leaf(kDuration), "extra": leaf(kDuration),
		"interval": leaf(kDuration), "burst_size": leaf(kCount), "p": leaf(kProb), "delay": leaf(kDuration),
	})
	capacityShape = object(map[string]*shape{
		"states":      {kind: kList, elem: object(map[string]*shape{"rate": leaf(kRate), "dwell": leaf(kDuration)})},
		"transitions": leaf(kMatrix),
		"dips": object(map[string]*shape{
			"every": leaf(kDuration), "depth": leaf(kProb), "scale": leaf(kDuration), "shape": leaf(kNumber), "cap": leaf(kDuration),
		}),
		"grant": object(map[string]*shape{"start": leaf(kProb), "ramp": leaf(kDuration)}),
	})
	traceShape  = object(map[string]*shape{"file": leaf(kString), "sha256": leaf(kString), "loop": leaf(kBool)})
	outageShape = object(map[string]*shape{"at": leaf(kDuration), "duration": leaf(kDuration)})
	// outagesShape: a bare list of outages is short for the object's
	// windows, as the object form is needed only for the periodic fields.
	outagesShape = &shape{kind: kList, elem: outageShape, alt: object(map[string]*shape{
		"windows": {kind: kList, elem: outageShape},
		"start":   leaf(kDuration), "every": leaf(kDuration), "duration": leaf(kDuration), "drop_on_outage": leaf(kBool),
	})}

	directionFields = map[string]*shape{
		"rate": leaf(kRate), "delay": leaf(kDuration), "overhead": leaf(kSize), "duplicate": leaf(kProb),
		"qdisc": qdiscShape, "loss": lossShape, "jitter": jitterShape,
		"capacity": capacityShape, "trace": traceShape, "outages": outagesShape,
	}
	directionShape = object(directionFields)

	linkShape = object(merge(directionFields, map[string]*shape{
		"id": leaf(kString), "a": leaf(kString), "b": leaf(kString),
		"ab": directionShape, "ba": directionShape,
	}))

	appShape = object(map[string]*shape{
		"kind": leaf(kString), "rate": leaf(kRate), "on": leaf(kDuration), "off": leaf(kDuration),
		"write": leaf(kSize),
	})

	tcpShape = object(map[string]*shape{
		"sack": leaf(kBool), "rack": leaf(kBool), "tlp": leaf(kBool), "prr": leaf(kBool),
		"frto": leaf(kBool), "pacing": leaf(kPacing), "tso": leaf(kBool), "gro": leaf(kBool),
		"delayed_ack": leaf(kBool), "ecn": leaf(kBool), "ecn_low": leaf(kBool),
		"mss": leaf(kSize), "init_cwnd": leaf(kCount), "sndbuf": leaf(kBuffer), "hz": leaf(kCount), "timestamps": leaf(kCount),
		"rcvbuf_init": leaf(kSize), "rcvbuf_max": leaf(kSize), "gro_interval": leaf(kDuration),
	})

	ackHoldShape = object(map[string]*shape{
		"quantiles": leaf(kDurations), "saturation": leaf(kProb), "window": leaf(kDuration),
	})
	ackGrantShape = object(map[string]*shape{
		"profile": leaf(kString), "gap": leaf(kDurations), "per_grant": leaf(kCount),
		"loss": leaf(kProb), "filter": leaf(kBool), "slot": leaf(kDuration),
	})

	// legShape is one leg of a flow a proxy splits.
	legShape = object(map[string]*shape{"cc": leaf(kString), "cc_params": leaf(kCCParams), "tcp": tcpShape})

	// hostShape is a group's per-flow host: the node it links to and its
	// access link's direction values (both directions alike).
	hostShape = object(merge(directionFields, map[string]*shape{"attach": leaf(kString)}))

	startShape = object(map[string]*shape{
		"kind": leaf(kString), "at": leaf(kDuration), "rate": leaf(kPerSecond), "span": leaf(kDuration),
		"every": leaf(kDuration), "batch": leaf(kCount), "jitter": leaf(kDuration),
	})

	sizeDistShape = object(map[string]*shape{
		"kind": leaf(kString), "value": leaf(kSize), "min": leaf(kSize), "max": leaf(kSize),
		"median": leaf(kSize), "sigma": leaf(kNumber), "alpha": leaf(kNumber),
		"file": leaf(kString), "cdf": leaf(kCDF),
	})

	// flowShape is a flow, or a flow group (keyed by "group", with "count").
	flowShape = object(map[string]*shape{
		"id": leaf(kString), "group": leaf(kString), "count": leaf(kCount),
		"src": union(kEnds, hostShape), "dst": union(kEnds, hostShape), "cc": leaf(kString), "cc_params": leaf(kCCParams),
		"rate": leaf(kRate), "start": union(kStart, startShape), "size": union(kFlowSize, sizeDistShape),
		"interval": leaf(kDuration), "packet_size": leaf(kSize), "ecn": leaf(kString), "app": appShape, "tcp": tcpShape,
		"rcv_hold": leaf(kDuration), "ack_hold": ackHoldShape, "ack_grant": ackGrantShape,
		"legs": {kind: kList, elem: legShape},
	})

	changeShape = object(map[string]*shape{
		"at": leaf(kDuration), "link": leaf(kString), "dir": leaf(kString),
		"rate": leaf(kRate), "delay": leaf(kDuration), "loss": lossShape,
		"jitter": jitterShape, "capacity": capacityShape, "outage": leaf(kDuration), "announce": leaf(kDuration),
		"duplicate": leaf(kProb),
	})

	scenarioShape = object(map[string]*shape{
		"name": leaf(kString), "description": leaf(kString),
		"runtime": object(map[string]*shape{"seed": leaf(kCount), "duration": leaf(kDuration), "kernel_clock": leaf(kString)}),
		"nodes":   {kind: kList, byID: true, elem: object(map[string]*shape{"id": leaf(kString), "kind": leaf(kString), "routing": leaf(kString), "buffer": leaf(kSize)})},
		"links":   {kind: kList, byID: true, elem: linkShape},
		"flows":   {kind: kList, byID: true, elem: flowShape},
		"changes": {kind: kList, elem: changeShape},
		"trace":   object(map[string]*shape{"detail": leaf(kString), "interval": leaf(kDuration)}),
		"traces":  leaf(kTexts),
	})
)

func merge(a, b map[string]*shape) map[string]*shape {
	m := make(map[string]*shape, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}
