"""Catching up to a far frame off the UI thread, as a job the UI drives in short ticks.

A jump past the end of a body's played run (or into an outdated cache) needs every frame in
between simulated. In the UI that is a :class:`CatchUp`: each :meth:`CatchUp.tick` moves the
timeline through the next frames for a few milliseconds, reads each frame's rig
(:meth:`session.Session.sample`) and hands it to a :class:`step_worker.StepWorker`, which runs the
physics while Blender redraws; the tick ends with the timeline back on the frame the user is
looking at. Meanwhile the body shows the plain rig and its status says how far the catch-up got.
Esc (:class:`ModalCatchUp`) stops it: the frames simulated so far stay in the frame cache, and
the body shows the plain rig at the frame it did not reach. Scripts and renders (background
mode) catch up before the frame is shown instead (``live.replay``), with the same frames.
"""

import time

import bpy

from . import live, step_worker

# A jump shorter than this many frames is simulated before the frame is shown, as playback is.
SYNCHRONOUS_FRAMES = 8
# Frames sampled ahead of the worker at most (the poses are kept until they are stepped).
AHEAD = 32


def _frame_set(scene, frame):
    """Moves the timeline without the live preview reacting to it."""
    was = live._replaying
    live._replaying = True
    try:
        scene.frame_set(frame)
    finally:
        live._replaying = was


class CatchUp:
    """Simulates ``bodies`` (``[(members, session)]``) to ``target``: each from the end of its
    played run when that is still valid and before ``target``, else from rest at the scene's
    start frame (what ``live.replay`` does, frame for frame). Construction checks the runs' ends
    (moving the timeline there and back); nothing is simulated until :meth:`tick`."""

    def __init__(self, scene, bodies, target):
        self.scene, self.bodies, self.target = scene, bodies, target
        start = scene.frame_start
        user = scene.frame_current
        begin = [s.last_frame if s.last_frame is not None and start <= s.last_frame < target else None
                 for _, s in bodies]
        try:
            for i, (obs, s) in enumerate(bodies):
                if begin[i] is not None and begin[i] in s.cache:
                    _frame_set(scene, begin[i])
                    if not s.show_cached(obs, bpy.context.evaluated_depsgraph_get(), begin[i]):
                        begin[i] = None
        finally:
            if scene.frame_current != user:
                _frame_set(scene, user)
        self.begin = [b if b is not None else start for b in begin]
        self.from_rest = [b is None for b in begin]
        self.first = min(self.begin)
        self.next = self.first
        # Progress counts steps (a reset is one): every body's frames from its start to target.
        self.total = sum(target - b + int(rest) for b, rest in zip(self.begin, self.from_rest))
        self.worker = step_worker.StepWorker(limit=AHEAD * len(bodies), name="overtone-catch-up")
        self.cancelled = False
        for _, s in bodies:
            s.catching_up = self
        self.main_seconds = 0.0  # UI-thread time spent in ticks (sampling the rig)

    @property
    def done(self):
        """Steps taken so far (of :attr:`total`)."""
        return self.worker.completed

    @property
    def finished(self):
        return self.next > self.target and self.worker.idle

    def tick(self, budget=0.02):
        """Samples the next frames for up to ``budget`` seconds (at least one frame while there
        is room ahead of the worker) and returns ``(done, total)``; raises what a step raised."""
        self.worker.check()
        t0 = time.perf_counter()
        user = self.scene.frame_current
        try:
            while self.next <= self.target and self.worker.room >= len(self.bodies):
                k = self.next
                _frame_set(self.scene, k)
                dg = bpy.context.evaluated_depsgraph_get()
                for (obs, s), b, rest in zip(self.bodies, self.begin, self.from_rest):
                    if k == b and rest:
                        self.worker.submit(s.restart, k, *s.sample(obs, dg))
                    elif k > b:
                        self.worker.submit(s.advance, k, *s.sample(obs, dg))
                self.next += 1
                if time.perf_counter() - t0 >= budget:
                    break
        finally:
            if self.scene.frame_current != user:
                _frame_set(self.scene, user)
            self.main_seconds += time.perf_counter() - t0
        return self.done, self.total

    def run(self):
        """Ticks until done (tests and scripts); returns ``(done, total)``."""
        while not self.finished:
            self.tick()
            self.worker.wait(0.05)
        self.worker.check()
        return self.close()

    def close(self):
        """Ends the worker (after the step in progress) and releases the bodies; their sessions
        are at the last frame stepped, with every frame stepped in their caches."""
        self.worker.close()
        for _, s in self.bodies:
            if getattr(s, "catching_up", None) is self:
                s.catching_up = None
        self.worker.check()
        return self.done, self.total

    def cancel(self):
        """Stops after the step in progress; the target is remembered as declined, so the frame
        handler does not start the same catch-up again (a play from the run's end, or a jump to
        another frame, goes on as usual)."""
        self.cancelled = True
        self.worker.close()
        for _, s in self.bodies:
            if getattr(s, "catching_up", None) is self:
                s.catching_up = None
            s.declined = self.target
        try:
            self.worker.check()
        except Exception:  # a step that failed as Esc was pressed: the frames before it stay
            pass


# The catch-up the frame handler asked for, until the modal operator takes it (or a timer drives
# it where no window can run the operator).
requested = []


def start(job):
    """Hands ``job`` to the UI: the modal operator ``overtone.catch_up`` (progress in the status
    bar, Esc stops) in the first window, or, where no operator can run, a timer."""
    requested[:] = [job]
    if not bpy.app.timers.is_registered(_invoke):
        bpy.app.timers.register(_invoke, first_interval=0.0)


def _invoke():
    if not requested:
        return None
    wm = bpy.context.window_manager
    window = wm.windows[0] if wm is not None and wm.windows else None
    if window is not None:
        try:
            with bpy.context.temp_override(window=window):
                if bpy.ops.overtone.catch_up('INVOKE_DEFAULT') == {'RUNNING_MODAL'}:
                    return None
        except (RuntimeError, AttributeError) as e:
            print(f"Overtone: catching up without the modal operator ({e})")
    job = requested.pop()
    modal = ModalCatchUp(job)

    def drive():
        try:
            answer = modal.handle('TIMER')
        except Exception as e:  # a timer must never raise into Blender
            print(f"Overtone: {e}")
            answer = {'CANCELLED'}
        if 'PASS_THROUGH' in answer:
            return 0.01
        live.after_catch_up(job)
        return None

    bpy.app.timers.register(drive, first_interval=0.0)
    return None


class ModalCatchUp:
    """The modal operator's logic, free of window-manager calls (tested headless, as
    ``bake.ModalBake``): ``'TIMER'`` ticks, Esc or right click cancels; answers the operator's
    return set."""

    CANCEL_EVENTS = {'ESC', 'RIGHTMOUSE'}

    def __init__(self, job, budget=0.02, on_progress=None):
        self.job, self.budget, self.on_progress = job, budget, on_progress

    def handle(self, event_type):
        if event_type in self.CANCEL_EVENTS:
            self.job.cancel()
            return {'CANCELLED'}
        if event_type != 'TIMER':
            return {'PASS_THROUGH'}
        try:
            done, total = self.job.tick(self.budget)
            if self.on_progress is not None:
                self.on_progress(done, total)
            if self.job.finished:
                self.job.close()
                return {'FINISHED'}
        except BaseException:
            self.job.cancel()
            raise
        return {'PASS_THROUGH'}
