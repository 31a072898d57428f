"""One background thread that runs a body's physics steps in order, so that a catch-up or a bake
keeps the UI thread free: the UI thread only moves the timeline and reads the rig (``bpy`` is not
thread-safe), the worker calls the library (ctypes releases the GIL for the whole native step)
and numpy. No ``bpy`` is touched on the worker.

Jobs are plain callables run in submission order; the first one to raise stops the worker, and
the exception is raised again on the UI thread by :meth:`StepWorker.check`. At most ``limit``
jobs wait at a time (:attr:`StepWorker.room`), which bounds the memory of the poses and meshes
sampled ahead.
"""

import collections
import threading


class StepWorker:
    """A worker thread over a bounded queue of jobs (see the module docs)."""

    def __init__(self, limit=32, name="overtone-steps"):
        self.limit = limit
        self._jobs = collections.deque()
        self._lock = threading.Condition()
        self._running = False  # a job is being run
        self._stop = False
        self.error = None
        self.completed = 0
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    @property
    def room(self):
        """How many more jobs may be submitted now."""
        with self._lock:
            return max(0, self.limit - len(self._jobs))

    @property
    def idle(self):
        """Nothing queued and nothing running (every submitted job done, or the worker stopped)."""
        with self._lock:
            return (not self._jobs and not self._running) or self.error is not None

    def submit(self, job, *args):
        """Queues ``job(*args)``; raises RuntimeError once the worker stopped or the queue is full."""
        with self._lock:
            if self._stop or self.error is not None:
                raise RuntimeError("the step worker has stopped")
            if len(self._jobs) >= self.limit:
                raise RuntimeError("the step worker's queue is full")
            self._jobs.append((job, args))
            self._lock.notify()

    def check(self):
        """Raises, on the caller's thread, the exception a job raised (once)."""
        with self._lock:
            error, self.error = self.error, None
        if error is not None:
            self._stop = True
            raise error

    def wait(self, timeout=None):
        """Blocks until the worker is idle (tests, and the end of a bake); returns whether it is."""
        with self._lock:
            return self._lock.wait_for(lambda: (not self._jobs and not self._running) or self.error is not None,
                                       timeout)

    def close(self):
        """Drops the jobs not started, lets the running one finish and ends the thread."""
        with self._lock:
            self._stop = True
            self._jobs.clear()
            self._lock.notify_all()
        self._thread.join()

    def _loop(self):
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._jobs or self._stop)
                if self._stop:
                    self._running = False
                    self._lock.notify_all()
                    return
                job, args = self._jobs.popleft()
                self._running = True
            try:
                job(*args)
                error = None
            except BaseException as e:  # handed to the UI thread, never lost
                error = e
            with self._lock:
                self._running = False
                if error is not None:
                    self.error = error
                    self._stop = True
                    self._jobs.clear()
                else:
                    self.completed += 1
                self._lock.notify_all()
