package listen

import (
	"bufio"
	"io"
)

// printer is the one writer of a listen session's output. Handlers hand it whole lines
// over a channel and never touch the streams, so lines cannot interleave and no handler
// waits on a lock held by another; stdout goes through a buffer that is flushed whenever
// the queue runs empty, which batches writes under load and shows each line at once when
// idle.
type printer struct {
	out    *bufio.Writer
	errOut io.Writer
	lines  chan line
	stop   chan struct{}
	done   chan struct{}
	// failed is called once with the first write error (a closed pipe, a full disk), so
	// that the session can end instead of printing into the void.
	failed func(error)
	err    error
}

type line struct {
	stderr bool
	b      []byte
}

// queueLen bounds the lines waiting to be written; when the streams are slower than the
// notifications, handlers wait, and so does the service, which loses nothing that way.
const queueLen = 8192

func newPrinter(out, errOut io.Writer, failed func(error)) *printer {
	p := &printer{
		out:    bufio.NewWriterSize(out, 64<<10),
		errOut: errOut,
		lines:  make(chan line, queueLen),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		failed: failed,
	}
	go p.run()
	return p
}

// Out queues a line for stdout; b must end with a newline and not be reused.
func (p *printer) Out(b []byte) { p.send(line{b: b}) }

// Err queues a line for stderr.
func (p *printer) Err(b []byte) { p.send(line{stderr: true, b: b}) }

func (p *printer) send(l line) {
	select {
	case p.lines <- l:
	case <-p.stop:
		// Only a handler that outlived the server's shutdown gets here; dropping its line
		// beats blocking forever.
	}
}

func (p *printer) run() {
	defer close(p.done)
	for {
		select {
		case l := <-p.lines:
			p.write(l)
			if len(p.lines) == 0 {
				p.flush()
			}
		case <-p.stop:
			for {
				select {
				case l := <-p.lines:
					p.write(l)
				default:
					p.flush()
					return
				}
			}
		}
	}
}

func (p *printer) write(l line) {
	if l.stderr {
		// Flush stdout first: on a terminal both streams show in the order things happened.
		// Messages still go out after stdout failed: they say why the session ends.
		p.flush()
		_, _ = p.errOut.Write(l.b) // a failing stderr has nowhere to be reported
		return
	}
	if p.err == nil { // after a failure, drain so that no handler blocks
		_, err := p.out.Write(l.b)
		p.fail(err)
	}
}

func (p *printer) flush() {
	if p.err == nil {
		p.fail(p.out.Flush())
	}
}

func (p *printer) fail(err error) {
	if err != nil && p.err == nil {
		p.err = err
		if p.failed != nil {
			p.failed(err)
		}
	}
}

// Close writes what is queued and stops the writer. Call it once nothing sends any more.
func (p *printer) Close() error {
	close(p.stop)
	<-p.done
	return p.err
}
