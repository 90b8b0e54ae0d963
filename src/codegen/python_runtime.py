# The runtime of a package that `soltune export --format python` writes: one function per exported
# problem, over any GPU array that offers __cuda_array_interface__ (CuPy, Numba, JAX) or DLPack, or is
# a torch tensor. Each call checks dtype, shapes, contiguity, alignment and device before it launches, and
# raises ValueError naming the argument otherwise: a call never launches on what it cannot serve.
# Standard library only; the kernels are the exported header's, built into _kernels.so.
import ctypes
import json
import os
import subprocess
import sys
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "_problems.json")) as _f:
    _META = json.load(_f)

# soltune's dtype names: the array interface's type string, torch's dtype name, bytes per element.
_DTYPES = {
    "f16": ("<f2", "float16", 2), "bf16": (None, "bfloat16", 2), "f32": ("<f4", "float32", 4),
    "f64": ("<f8", "float64", 8), "i8": ("|i1", "int8", 1), "i16": ("<i2", "int16", 2),
    "i32": ("<i4", "int32", 4), "i64": ("<i8", "int64", 8), "u8": ("|u1", "uint8", 1),
    "u16": ("<u2", "uint16", 2), "u32": ("<u4", "uint32", 4), "u64": ("<u8", "uint64", 8),
    "bool": ("|b1", "bool", 1),
}
_BY_TYPESTR = {v[0]: k for k, v in _DTYPES.items() if v[0]}
_BY_TORCH = {v[1]: k for k, v in _DTYPES.items()}
# DLPack's (type code, bits) of one lane: int 0, uint 1, float 2, bfloat 4, bool 6.
_BY_DLPACK = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8", (1, 16): "u16",
              (1, 32): "u32", (1, 64): "u64", (2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16",
              (6, 8): "bool"}
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13  # DLPack device types the kernels can read
_MODULE_OF = {}    # an array's type -> its library's top module ("torch", "cupy", ...)
_TORCH_DTYPE = {}  # torch's dtype objects -> soltune's names, filled as they are met


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_lib = None
_lock = threading.Lock()


def _build():
    """Builds _kernels.so from _kernels.cu with the command export recorded (nvcc)."""
    cmd = _META["build"]
    try:
        subprocess.run(cmd, cwd=_HERE, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError("building the kernels needs %s (the CUDA toolkit's nvcc)" % cmd[0]) from None
    except subprocess.CalledProcessError as e:
        raise RuntimeError("building the kernels failed: %s\n%s" % (" ".join(cmd), e.stderr)) from None


def _library():
    global _lib
    if _lib is not None:  # loaded: no lock needed to read it
        return _lib
    with _lock:
        if _lib is None:
            path = os.path.join(_HERE, "_kernels.so")
            if not os.path.exists(path):
                _build()
            lib = ctypes.CDLL(path)
            lib.soltune_py_error_name.restype = ctypes.c_char_p
            lib.soltune_py_pointer_device.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            lib.soltune_py_device_info.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_longlong)]
            _lib = lib
        return _lib


def _error(code):
    return _library().soltune_py_error_name(code).decode()


# Expressions of the problem's shapes (soltune's syntax: C's operators, ?:, cdiv, fdiv, mod, min,
# max, pow), evaluated over doubles as soltune evaluates them. A name not yet known raises _Unknown.
class _Unknown(Exception):
    pass


def _tokens(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isdigit() or c == ".":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "."):
                j += 1
            out.append(("num", float(text[i:j])))
            i = j
        elif c.isalpha() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(("name", text[i:j]))
            i = j
        else:
            two = text[i:i + 2]
            op = two if two in ("&&", "||", "==", "!=", "<=", ">=") else c
            out.append(("op", op))
            i += len(op)
    return out


_FUNCS = {"cdiv": lambda a, b: -((-a) // b), "fdiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
          "min": min, "max": max, "pow": pow}
_BINARY = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%")]
_OPS = {"||": lambda a, b: float(bool(a) or bool(b)), "&&": lambda a, b: float(bool(a) and bool(b)),
        "==": lambda a, b: float(a == b), "!=": lambda a, b: float(a != b), "<": lambda a, b: float(a < b),
        "<=": lambda a, b: float(a <= b), ">": lambda a, b: float(a > b), ">=": lambda a, b: float(a >= b),
        "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
        "%": lambda a, b: a % b}
# The device's attributes an expression may name (a workspace's shape), read from the device.
_DEVICE_SYMBOLS = ("sms", "cc", "smem_optin", "l2_bytes")


_TOKENS = {}


def _eval(text, env):
    toks = _TOKENS.get(text)
    if toks is None:
        toks = _TOKENS[text] = _tokens(text)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else ("end", None)

    def take():
        t = peek()
        pos[0] += 1
        return t

    def expect(op):
        if take() != ("op", op):
            raise ValueError("bad expression %r" % text)

    def primary():
        kind, v = take()
        if kind == "num":
            return v
        if kind == "op" and v == "(":
            r = ternary()
            expect(")")
            return r
        if kind == "op" and v in ("-", "!", "+"):
            r = primary()
            return -r if v == "-" else (float(not r) if v == "!" else r)
        if kind == "name":
            if peek() == ("op", "("):
                take()
                args = [ternary()]
                while peek() == ("op", ","):
                    take()
                    args.append(ternary())
                expect(")")
                return float(_FUNCS[v](*args))
            if v not in env:
                raise _Unknown(v)
            return float(env[v])
        raise ValueError("bad expression %r" % text)

    def binary(level):
        if level == len(_BINARY):
            return primary()
        left = binary(level + 1)
        while peek()[0] == "op" and peek()[1] in _BINARY[level]:
            op = take()[1]
            right = binary(level + 1)
            left = _OPS[op](left, right)
        return left

    def ternary():
        c = binary(0)
        if peek() == ("op", "?"):
            take()
            a = ternary()
            expect(":")
            b = ternary()
            return a if c else b
        return c

    r = ternary()
    if peek()[0] != "end":
        raise ValueError("bad expression %r" % text)
    return r


class _Array:
    """What a call needs of an array: pointer, shape, element strides (None: contiguous), dtype, device."""

    def __init__(self, name, obj):
        self.name, self.obj, self.lib, self.device = name, obj, None, None
        cls = type(obj)
        mod = _MODULE_OF.get(cls)
        if mod is None:
            mod = _MODULE_OF.setdefault(cls, cls.__module__.split(".")[0])
        if mod == "torch":
            global _TORCH
            if _TORCH is None:
                _TORCH = sys.modules["torch"]
            if not obj.is_cuda:
                raise ValueError("%s: a tensor on %s; the kernels take CUDA tensors" % (name, obj.device))
            self.lib, self.device = "torch", obj.get_device()
            self.ptr, self.shape = obj.data_ptr(), tuple(obj.shape)
            self.strides = obj.stride()
            t = obj.dtype
            self.dtype = _TORCH_DTYPE.get(t)
            if self.dtype is None:
                self.dtype = _TORCH_DTYPE.setdefault(t, _BY_TORCH.get(str(t).replace("torch.", "")))
            self.dtype_text = str(t)
            return
        cai = getattr(obj, "__cuda_array_interface__", None)
        if cai is None and hasattr(obj, "__dlpack__"):
            self._from_dlpack(obj)
            return
        if cai is None:
            raise ValueError("%s: %s offers neither __cuda_array_interface__ nor __dlpack__ (pass a torch tensor "
                             "or a CuPy, Numba or JAX array on the GPU)" % (name, type(obj).__name__))
        self.lib = "cupy" if mod == "cupy" else "cai"
        self.ptr, self.shape = int(cai["data"][0]), tuple(int(d) for d in cai["shape"])
        self.dtype, self.dtype_text = _BY_TYPESTR.get(cai["typestr"]), cai["typestr"]
        strides = cai.get("strides")
        size = _DTYPES[self.dtype][2] if self.dtype else 1
        self.strides = None if strides is None else tuple(s // size for s in strides)
        self.cai_stream = cai.get("stream")

    def _from_dlpack(self, obj):
        """An array that offers only DLPack: read the DLTensor its capsule holds. The capsule stays
        unconsumed (its destructor returns the tensor to the producer) and is kept alive with this
        object, until the launch is queued. The producer's work is ordered before the legacy default
        stream (stream=1), which every blocking stream waits for."""
        def refuse_unless_cuda(device_type):
            if device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
                raise ValueError("%s: DLPack device type %d (1 is the host); the kernels take CUDA memory"
                                 % (self.name, device_type))

        if hasattr(obj, "__dlpack_device__"):  # asked first: no capsule is made for host memory
            refuse_unless_cuda(int(obj.__dlpack_device__()[0]))
        try:
            capsule = obj.__dlpack__(stream=1)
        except TypeError:  # a producer that takes no stream
            capsule = obj.__dlpack__()
        address = _capsule_pointer(capsule, b"dltensor")
        t = _DLManagedTensor.from_address(address).dl_tensor
        refuse_unless_cuda(t.device.device_type)
        self.lib, self.keep, self.device = "dlpack", capsule, int(t.device.device_id)
        self.ptr = (t.data or 0) + int(t.byte_offset)
        self.shape = tuple(int(t.shape[i]) for i in range(t.ndim))
        self.strides = tuple(int(t.strides[i]) for i in range(t.ndim)) if t.strides else None
        code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        self.dtype = _BY_DLPACK.get((code, bits)) if lanes == 1 else None
        self.dtype_text = "DLPack code %d, %d bits x %d" % (code, bits, lanes)

    def contiguous(self):
        if self.strides is None:
            return True
        expected, step = [], 1
        for d in reversed(self.shape):
            expected.append(step)
            step *= d
        return all(s == e or d == 1 for s, e, d in zip(self.strides, reversed(expected), self.shape))


def _device_of(a):
    if a.device is not None:
        return a.device
    dev = ctypes.c_int(-1)
    code = _library().soltune_py_pointer_device(ctypes.c_void_p(a.ptr), ctypes.byref(dev))
    if code != 0:
        raise ValueError("%s: cannot tell where its memory lies (%s)" % (a.name, _error(code)))
    if dev.value < 0:
        raise ValueError("%s: host memory; the kernels take GPU memory" % a.name)
    return dev.value


def _dtype_of(a, dtype):
    """An argument's dtype in a call of dtype: the call's for T, else its own (attention's f32 log-sum-exp)."""
    return dtype if a["dtype"] == "T" else a["dtype"]


def _allocate(like, dims, dtype):
    if like.lib == "torch":
        import torch
        return torch.empty(dims, dtype=getattr(torch, _DTYPES[dtype][1]), device=like.obj.device)
    if like.lib == "cupy":
        import cupy
        with cupy.cuda.Device(_device_of(like)):
            return cupy.empty(dims, dtype=_DTYPES[dtype][1])
    raise ValueError("pass out=: outputs are allocated with torch or CuPy only (the inputs are %s)"
                     % type(like.obj).__name__)


_TORCH = None  # the torch module, once a torch tensor was met


_RAW_STREAM = []  # torch's function that gives the current stream's handle alone, once looked up


def _raw_stream(device):
    """torch's current stream on device, as a handle."""
    if not _RAW_STREAM:
        raw = getattr(_TORCH._C, "_cuda_getCurrentRawStream", None)  # no Stream object made
        _RAW_STREAM.append(raw or (lambda d: _TORCH.cuda.current_stream(d).cuda_stream))
    return _RAW_STREAM[0](device)


def _stream(stream, first):
    if stream is not None:
        for attr in ("cuda_stream", "ptr"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        return int(stream)
    if first.lib == "torch":
        return _raw_stream(first.device)
    if first.lib == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    s = getattr(first, "cai_stream", None)
    return 0 if s in (None, 1) else int(s)


class _Problem:
    def __init__(self, meta):
        self.meta = meta
        self.checked = {}  # calls checked whole: their dtype and sizes, by what the check read
        self.workspaces = {}  # zeroed workspaces by (argument, device, stream, dims)
        self.needs_device = any(kind == "name" and v in _DEVICE_SYMBOLS
                                for a in meta["args"] for e in a["shape"] for kind, v in _tokens(e))
        self.inputs = [a for a in meta["args"] if a["role"] in ("in", "constant", "inout")]
        self.outputs = [a for a in meta["args"] if a["role"] == "out"]
        self.names = [a["name"] for a in meta["args"]]
        self.workspace_args = [a for a in meta["args"] if a["role"] == "workspace"]
        self.ptr_type = ctypes.c_void_p * len(meta["args"])
        self.size_type = ctypes.c_longlong * len(meta["sizes"])
        self.entries = {}  # dtype -> the entry point, its argument types set
        # torch calls whose every check passed once, by what the checks read of each tensor (dtype,
        # shape, strides, device): the launch's fixed parts. Only the data pointers change.
        self.torch_calls = {}
        # The fast path passes the inputs' pointers, then the outputs': where the entry point takes
        # exactly these, in this order.
        self.fast = self.names == [a["name"] for a in self.inputs + self.outputs] and \
            all(a["role"] in ("in", "out") for a in meta["args"])

    def entry(self, dtype):
        fn = self.entries.get(dtype)
        if fn is None:
            fn = getattr(_library(), "soltune_py_%s_%s" % (self.meta["name"], dtype))
            fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            fn.restype = ctypes.c_int
            self.entries[dtype] = fn
        return fn

    def bind(self, args, out, sizes):
        """The call's arrays by argument name, its dtype, its sizes and device; ValueError otherwise."""
        m = self.meta
        if len(args) != len(self.inputs):
            raise ValueError("%s takes %d array(s) (%s), got %d" % (
                m["name"], len(self.inputs), ", ".join(a["name"] for a in self.inputs), len(args)))
        for k in sizes:
            if k not in m["sizes"]:
                raise ValueError("%s has no size %r (its sizes: %s)" % (m["name"], k, ", ".join(m["sizes"])))
        arrays = {a["name"]: _Array(a["name"], x) for a, x in zip(self.inputs, args)}
        outs = out if isinstance(out, (tuple, list)) else ([] if out is None else [out])
        if outs and len(outs) != len(self.outputs):
            raise ValueError("out: %s writes %d output(s) (%s), got %d" % (
                m["name"], len(self.outputs), ", ".join(a["name"] for a in self.outputs), len(outs)))
        for a, x in zip(self.outputs, outs):
            arrays[a["name"]] = _Array(a["name"], x)
        first = arrays[self.inputs[0]["name"]]
        # A call like one checked before (dtypes, shapes, strides, sizes) needs only its pointers checked.
        key = (tuple((n, x.dtype, x.shape, x.strides) for n, x in arrays.items()), tuple(sorted(sizes.items())) if sizes else ())
        known = self.checked.get(key)
        if known is not None:
            dtype, env = known
            device = _device_of(first)
            for x in arrays.values():
                if x.ptr % 16 != 0:
                    raise ValueError("%s: its data starts at 0x%x, not 16-byte aligned" % (x.name, x.ptr))
                if x is not first and _device_of(x) != device:
                    raise ValueError("%s: on GPU %d, %s on GPU %d" % (x.name, _device_of(x), first.name, device))
            return arrays, dtype, env, device, first
        dtype = first.dtype if self.inputs[0]["dtype"] == "T" else None
        if dtype is None:
            dtype = next((arrays[a["name"]].dtype for a in self.inputs if a["dtype"] == "T"), None)
        if dtype not in m["dtypes"]:
            raise ValueError("%s: dtype %s; the exported kernels take %s" % (
                first.name, first.dtype or first.dtype_text, ", ".join(m["dtypes"])))
        args_meta = [a for a in m["args"] if a["name"] in arrays]
        for a in args_meta:
            want = _dtype_of(a, dtype)
            x = arrays[a["name"]]
            if x.dtype != want:
                raise ValueError("%s: dtype %s; expected %s" % (a["name"], x.dtype or x.dtype_text, want))
            rank = len(a["shape"]) + (1 if a["lanes"] > 1 else 0)
            if len(x.shape) != rank:
                raise ValueError("%s: %d dimension(s); expected %d (%s%s)" % (
                    a["name"], len(x.shape), rank, ", ".join(a["shape"]), ", %d" % a["lanes"] if a["lanes"] > 1 else ""))
        env = self.sizes({n: x.shape for n, x in arrays.items()}, sizes)
        env.update(self.device_env(first))
        for a in args_meta:
            x = arrays[a["name"]]
            dims = self.dims(a, env)
            if list(x.shape) != dims:
                raise ValueError("%s: shape %s; expected %s at %s" % (
                    a["name"], tuple(x.shape), tuple(dims), ", ".join("%s=%d" % (s, env[s]) for s in m["sizes"])))
            if not x.contiguous():
                raise ValueError("%s: strides %s; the kernels take contiguous (row-major) arrays" % (a["name"], x.strides))
            if x.ptr % 16 != 0:
                raise ValueError("%s: its data starts at 0x%x, not 16-byte aligned" % (a["name"], x.ptr))
        device = _device_of(first)
        for name, x in arrays.items():
            if _device_of(x) != device:
                raise ValueError("%s: on GPU %d, %s on GPU %d" % (name, _device_of(x), first.name, device))
        if not self.needs_device and len(self.checked) < 1024:
            self.checked[key] = (dtype, env)
        return arrays, dtype, env, device, first

    def size_value(self, name, value):
        """A size given by its value, or by the name problem.yaml gives that value (matmul_epilogue's
        act="gelu_tanh"); ValueError for a name the size does not have."""
        names = self.meta.get("names", {}).get(name)
        if isinstance(value, str):
            if not names or value not in names:
                raise ValueError("%s: size %s has no value named %r%s" % (
                    self.meta["name"], name, value, " (its names: %s)" % ", ".join(names) if names else ""))
            return int(names[value])
        return int(value)

    def sizes(self, shapes, given):
        """The sizes: those given, then those a dimension names alone (shapes: by argument name)."""
        m = self.meta
        env = {k: self.size_value(k, v) for k, v in given.items()}
        for a in m["args"]:
            for d, e in zip(shapes.get(a["name"], ()), a["shape"]):
                if e in m["sizes"] and e not in env:
                    env[e] = int(d)
        # A dimension that is an expression (matmul's b: "trans_b == 1 ? n : k") gives the one size
        # it still lacks, where that value reproduces the dimension.
        progress = True
        while progress:
            progress = False
            for a in m["args"]:
                for d, e in zip(shapes.get(a["name"], ()), a["shape"]):
                    if e not in _TOKENS:
                        _TOKENS[e] = _tokens(e)
                    unknown = {v for kind, v in _TOKENS[e] if kind == "name" and v in m["sizes"] and v not in env}
                    if len(unknown) != 1:
                        continue
                    u = unknown.pop()
                    try:  # d for u = d, and not for another value: the dimension is u's
                        fits = int(_eval(e, {**env, u: int(d)})) == int(d) != int(_eval(e, {**env, u: int(d) + 1}))
                    except (_Unknown, ZeroDivisionError):
                        fits = False
                    if fits:
                        env[u] = int(d)
                        progress = True
        for name, value in m.get("defaults", {}).items():
            env.setdefault(name, int(value))
        missing = [s for s in m["sizes"] if s not in env]
        if missing:
            raise ValueError("%s: size(s) %s not seen in the arrays' shapes: pass them (%s=...)" % (
                m["name"], ", ".join(missing), missing[0]))
        return env

    def dims(self, a, env):
        return [int(_eval(e, env)) for e in a["shape"]] + ([a["lanes"]] if a["lanes"] > 1 else [])

    def device_env(self, first):
        # Device symbols a workspace's shape may name (sms); read only where a shape needs them.
        if not self.needs_device:
            return {}
        info = (ctypes.c_longlong * 4)()
        code = _library().soltune_py_device_info(_device_of(first), info)
        if code != 0:
            raise RuntimeError("the device's attributes: %s" % _error(code))
        return dict(zip(_DEVICE_SYMBOLS, info))  # the order soltune_py_device_info writes them in

    def torch_key(self, tensors, sizes):
        """What the checks read of torch tensors and the sizes given, or None where one is not a torch
        tensor."""
        key = [tuple(sorted(sizes.items()))] if sizes else []
        for t in tensors:
            if _MODULE_OF.get(type(t)) != "torch":
                return None
            key.append((t.dtype, t.shape, t.stride(), t.get_device()))
        return tuple(key)

    def call_torch(self, args, out, sizes):
        """A torch call like one checked before (its sizes given alike): its alignment checked, then
        launched. None where the call is not one (the full path then checks it, and remembers it).
        The host's time per call is the package's overhead (bench/python_overhead.py): no step here
        that the key does not need."""
        tensors = args if out is None else args + (out,)
        key = self.torch_key(tensors, sizes)
        launch = self.torch_calls.get(key) if key is not None else None
        if launch is None:
            return None
        entry, device, env, sz, outs = launch
        if out is None:
            out = tuple(_TORCH.empty(dims, dtype=t, device=args[0].device) for dims, t in outs)
        else:
            out = (out,)
        ptrs = [t.data_ptr() for t in args]
        ptrs += [t.data_ptr() for t in out]
        low = 0
        for p in ptrs:
            low |= p
        if low & 15:
            return None  # the full path names the argument
        code = entry(device, self.ptr_type(*ptrs), sz, _raw_stream(device))
        if code != 0:
            self.launch_failed(code, env)
        return out[0] if len(out) == 1 else out

    def launch_failed(self, code, env):
        m = self.meta
        raise RuntimeError("%s: %s (no kernel serves %s, or the launch failed)" % (
            m["name"], _error(code), ", ".join("%s=%d" % (s, env[s]) for s in m["sizes"])))

    def call(self, args, out, stream, sizes):
        if self.fast and stream is None and (
                out is None or (len(self.outputs) == 1 and not isinstance(out, (tuple, list)))):
            done = self.call_torch(args, out, sizes)
            if done is not None:
                return done
        m = self.meta
        arrays, dtype, env, device, first = self.bind(args, out, sizes)
        for a in self.outputs:
            if a["name"] not in arrays:
                arrays[a["name"]] = _Array(a["name"], _allocate(first, self.dims(a, env), _dtype_of(a, dtype)))
        launch_stream = _stream(stream, first)
        for a in self.workspace_args:
            # Zeroed once, and left zeroed by every kernel (the header's contract, which soltune
            # checks of each candidate): one per device and stream, so that no two launches
            # in flight share it.
            dims = self.dims(a, env)
            key = (a["name"], device, launch_stream, tuple(dims))
            if key not in self.workspaces:
                self.workspaces[key] = _zeros(first, dims, _dtype_of(a, dtype))
            arrays[a["name"]] = _Array(a["name"], self.workspaces[key])
        # The arrays (in `arrays`) stay alive until the launch is queued.
        ptrs = self.ptr_type(*[arrays[n].ptr for n in self.names])
        sz = self.size_type(*[env[s] for s in m["sizes"]])
        code = self.entry(dtype)(device, ptrs, sz, launch_stream)
        if code != 0:
            self.launch_failed(code, env)
        results = tuple(arrays[a["name"]].obj for a in self.outputs)
        if self.fast and stream is None and first.lib == "torch" and len(self.torch_calls) < 1024 and (
                out is None or len(self.outputs) == 1):
            # Remembered by the tensors as they were checked (the output too, where it was given).
            key = self.torch_key(tuple(args) if out is None else tuple(args) + (out,), sizes)
            if key is not None:
                self.torch_calls[key] = (self.entry(dtype), device, env, sz,
                                         tuple((tuple(r.shape), r.dtype) for r in results))
        return results[0] if len(results) == 1 else results

    def choice(self, args, sizes):
        _, dtype, env, device, _ = self.bind(args, None, sizes)
        sz = (ctypes.c_longlong * len(self.meta["sizes"]))(*[int(env[s]) for s in self.meta["sizes"]])
        source = ctypes.c_int(-1)
        fn = getattr(_library(), "soltune_py_%s_%s_choice" % (self.meta["name"], dtype))
        index = fn(ctypes.c_int(device), sz, ctypes.byref(source))
        return {"index": index, "source": {0: "tuned", 1: "nearest", 2: "fallback"}.get(source.value, "none"),
                "dtype": dtype, "sizes": {s: int(env[s]) for s in self.meta["sizes"]}}


def _zeros(like, dims, dtype):
    """Zeros, written before any launch on any stream reads them (the device synchronized after, but
    inside a CUDA graph's capture, where the memset is part of the graph)."""
    if like.lib == "torch":
        import torch
        z = torch.zeros(dims, dtype=getattr(torch, _DTYPES[dtype][1]), device=like.obj.device)
        if not torch.cuda.is_current_stream_capturing():
            torch.cuda.synchronize(like.obj.device)
        return z
    if like.lib == "cupy":
        import cupy
        with cupy.cuda.Device(_device_of(like)) as d:
            z = cupy.zeros(dims, dtype=_DTYPES[dtype][1])
            d.synchronize()
            return z
    raise ValueError("%s needs a workspace, allocated with torch or CuPy only" % like.name)


def _make(meta):
    p = _Problem(meta)
    names = ", ".join(a["name"] for a in p.inputs)

    def run(*arrays, out=None, stream=None, **sizes):
        return p.call(arrays, out, stream, sizes)

    def choice(*arrays, **sizes):
        return p.choice(arrays, sizes)

    run.__name__ = meta["name"]
    run.__doc__ = "%s(%s, out=None, stream=None, **sizes): %s\nKernels tuned on %s; dtypes %s." % (
        meta["name"], names, meta["description"], _META["gpu"], ", ".join(meta["dtypes"]))
    choice.__name__ = meta["name"] + "_choice"
    return run, choice


def _op_args(p, args, kwargs):
    """A custom op's arguments by the schema's names (torch may pass any of them by keyword): the
    input arrays in order, and the sizes given."""
    bound = dict(zip([a["name"] for a in p.inputs] + p.meta["sizes"], args))
    bound.update(kwargs)
    return [bound[a["name"]] for a in p.inputs], {s: bound[s] for s in p.meta["sizes"] if bound.get(s) is not None}


def _torch_ops():
    """torch.ops.soltune.<problem>: each function as a PyTorch custom op with a fake implementation,
    so that torch.compile traces it without a graph break (PyTorch 2.4 and newer; problems that write
    an input in place are left out)."""
    try:
        import torch
    except ImportError:
        return
    if not hasattr(torch.library, "register_fake"):
        return
    lib = torch.library.Library("soltune", "FRAGMENT")
    for meta in _META["problems"]:
        p = _Problem(meta)
        if any(a["role"] == "inout" for a in meta["args"]):
            continue
        try:
            lib.define("%s(%s%s) -> %s" % (
                meta["name"], ", ".join("Tensor %s" % a["name"] for a in p.inputs),
                "".join(", int? %s=None" % s for s in meta["sizes"]),
                "Tensor" if len(p.outputs) == 1 else "(%s)" % ", ".join(["Tensor"] * len(p.outputs))))
        except RuntimeError:
            continue  # another package of soltune kernels defined it first in this process

        # Each takes its problem as a default: a closure would see the loop's last one.
        def impl(*args, p=p, **kwargs):
            arrays, given = _op_args(p, args, kwargs)
            return p.call(arrays, None, None, given)

        def fake(*args, p=p, **kwargs):
            arrays, given = _op_args(p, args, kwargs)
            env = p.sizes({a["name"]: tuple(x.shape) for a, x in zip(p.inputs, arrays)}, given)
            dtype = lambda a: arrays[0].dtype if a["dtype"] == "T" else getattr(torch, _DTYPES[a["dtype"]][1])
            outs = tuple(arrays[0].new_empty(p.dims(a, env), dtype=dtype(a)) for a in p.outputs)
            return outs[0] if len(outs) == 1 else outs

        lib.impl(meta["name"], impl, "CUDA")
        torch.library.register_fake("soltune::" + meta["name"], fake, lib=lib)
    globals()["_torch_library"] = lib  # the registrations last as long as the module


for _m in _META["problems"]:
    globals()[_m["name"]], globals()[_m["name"] + "_choice"] = _make(_m)
_torch_ops()
__all__ = [m["name"] for m in _META["problems"]] + [m["name"] + "_choice" for m in _META["problems"]]
