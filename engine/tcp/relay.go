package tcp

// A split-TCP proxy relays bytes from the receiving end of one connection
// to the sending end of another, through a bounded buffer. The proxy's
// application reads from the first socket only what the buffer has room
// for; unread bytes stay in that socket's receive queue and shrink the
// window it advertises (sk_rmem_alloc in tcp_space), which is how the back
// pressure reaches the first sender. What it reads it writes to the second
// socket, whose sender may send no further than what was written.

// Relay is the data a relay has written to a sender (Feed).
type Relay struct {
	Written uint64 // payload bytes written so far
}

// Feed writes n more bytes to a relay-fed sender and sends what its
// windows allow (tcp_sendmsg, then tcp_push).
func (d *DataSender) Feed(n uint64) {
	if n == 0 || d.cfg.Relay == nil {
		return
	}
	d.st.Now = d.s.Now() // called from another component's event
	if d.state == sndEstablished {
		d.checkAppLimited()         // before the new data is queued, as tcp_sendmsg
		d.slowStartAfterIdleCheck() // tcp_skb_entail's, for the skb it queues
	}
	d.feedSeq = 1 + d.cfg.Relay.Written
	d.cfg.Relay.Written += n
	d.push()
	d.record()
}

// Read is a held receiver's application reading up to max bytes of
// in-order data (tcp_recvmsg): it returns how many it read; the buffer is
// autotuned and an ACK may announce the reopened window, as after any
// read (tcp_rcv_space_adjust, tcp_cleanup_rbuf).
func (r *Receiver) Read(max uint64) uint64 {
	n := min(max, r.rcvNxt-r.copiedSeq)
	if n == 0 {
		return 0
	}
	r.consume(n)
	r.cleanupRbuf()
	return n
}
