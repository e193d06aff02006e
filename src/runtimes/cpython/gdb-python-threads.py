"""Every thread's Python frames, read by CPython's own gdb extension in a gdb that has a core open.

Run by gdb's `python` through runpy (gdb-extension.ts's extensionCommand), with `extension`, the
path of the interpreter's python3.X-gdb.py, in its globals. Loads the extension into gdb's __main__
unless gdb has it, then for each thread (the selection put back after) walks the native frames
outward and, at each evaluation loop, its interpreter frames up to the one it was entered with,
with the extension's own classes (Frame, PyFramePtr). Prints what it read as one line of JSON
between markers; whatever it could not read is said. A core's garbage can claim any count or
length: every walk and text is bounded, and so is the time spent.
"""
import json
import time

import __main__
import gdb

BEGIN = "<<dumpdbg python threads>>"
END = "<</dumpdbg python threads>>"

LIMITS = {
    "threads": 1000,
    "native_frames": 2000,
    "frames": 1000,
    "locals": 20,
    "repr": 200,
    "text": 1000,
    # Characters of locals over the whole process, beyond which frames' locals are not read.
    "locals_budget": 262144,
    "seconds": 20,
}

# _frameowner's FRAME_OWNED_BY_GENERATOR: a generator's frame is complete however far it ran.
OWNED_BY_GENERATOR = 1


def text(value, limit=LIMITS["text"]):
    return None if value is None else str(value)[:limit]


def started(frame):
    """Whether a frame began to run: CPython's tracebacks (and the direct reader) skip one that has not."""
    try:
        if int(frame._gdbval["owner"]) == OWNED_BY_GENERATOR:
            return True
        return frame.f_lasti >= int(frame.co.field("_co_firsttraceable"))
    except Exception:
        return True


class Reader:
    def __init__(self, classes):
        self.Frame = classes.Frame
        self.budget = LIMITS["locals_budget"]

    def locals_of(self, frame):
        """The frame's locals with their reprs, cut short; None where not read."""
        if self.budget <= 0:
            return None
        try:
            found = []
            for name, value in frame.iter_locals():
                if len(found) == LIMITS["locals"]:
                    break
                local = {"name": text(name.proxyval(set()), LIMITS["repr"]), "value": text(value.get_truncated_repr(LIMITS["repr"]), LIMITS["repr"])}
                self.budget -= len(local["name"]) + len(local["value"])
                found.append(local)
            return found
        except Exception:
            return None

    def python_frames(self, native, frames):
        """The evaluation loop's frames, appended to `frames`; why the walk stopped short, else None."""
        frame = self.Frame(native).get_pyop()
        seen = set()
        while True:
            if frame is None or frame.is_optimized_out():
                return "an evaluation loop's frame is optimized out"
            address = frame.as_address()
            if address == 0:
                return "a chain of frames ends before the frame its evaluation loop was entered with"
            if address in seen:
                return "its frames loop back to 0x%x" % address
            if len(frames) == LIMITS["frames"]:
                return "more than %d frames: the outer ones were not read" % LIMITS["frames"]
            seen.add(address)
            try:
                entry = bool(frame.is_entry())
                if started(frame):
                    frames.append({
                        "function": text(frame.co.pyop_field("co_qualname").proxyval(set())),
                        "file": text(frame.filename()),
                        "line": frame.current_line_num(),
                        "firstLine": int(frame.co.field("co_firstlineno")),
                        "entry": entry,
                        "locals": self.locals_of(frame),
                    })
            except Exception as error:
                return "the frame at 0x%x: %s; it and the frames that called it are unknown" % (address, text(error))
            if entry:
                return None
            try:
                frame = frame.previous()
            except Exception as error:
                return "the frame that called the one at 0x%x: %s; it and the frames that called it are unknown" % (address, text(error))

    def thread(self, thread):
        thread.switch()
        frames = []
        problems = []
        try:
            native = gdb.newest_frame()
            count = 0
            while native is not None:
                if count == LIMITS["native_frames"]:
                    problems.append("more than %d native frames: the outer ones were not read" % LIMITS["native_frames"])
                    break
                count += 1
                if self.Frame(native).is_evalframe():
                    why = self.python_frames(native, frames)
                    if why is not None:
                        problems.append(why)
                        break
                native = native.older()
        except Exception as error:
            problems.append(text(error))
        return {"lwp": thread.ptid[1], "frames": frames, "complete": not problems, "why": "; ".join(problems) or None}


def read(extension):
    if not hasattr(__main__, "PyFramePtr") or not hasattr(__main__, "Frame"):
        gdb.execute("source " + extension, to_string=True)
    try:
        gdb.lookup_type("PyObject")
    except gdb.error:
        return {"refused": "gdb has no debug information for the interpreter (it knows no type PyObject)"}
    out = {"version": None, "threads": [], "notes": []}
    try:
        out["version"] = int(gdb.parse_and_eval("Py_Version"))
    except Exception:
        pass
    reader = Reader(__main__)
    deadline = time.monotonic() + LIMITS["seconds"]
    selected = gdb.selected_thread()
    try:
        selected_frame = gdb.selected_frame()
    except gdb.error:
        selected_frame = None
    try:
        for thread in gdb.selected_inferior().threads()[:LIMITS["threads"]]:
            if time.monotonic() > deadline:
                out["notes"].append("reading took longer than %d s: the remaining threads were not read" % LIMITS["seconds"])
                break
            try:
                out["threads"].append(reader.thread(thread))
            except Exception as error:
                out["threads"].append({"lwp": thread.ptid[1], "frames": [], "complete": False, "why": text(error)})
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()
            if selected_frame is not None and selected_frame.is_valid():
                selected_frame.select()
    return out


try:
    reading = read(extension)  # given by the command, in runpy's init_globals
except Exception as error:
    reading = {"refused": "the extension failed: " + text(error)}
print(BEGIN)
print(json.dumps(reading))
print(END)
