/* nnabla._native_graph: the hot paths of dynamic and imperative code, in C.
 *
 * - Builder: an F.* call under nn.auto_forward() on Variables runs its kernel and makes one
 *   output SyncedArray, one VarNode, one Function and one Variable.
 * - CallSite: an F.* wrapper's lookup of the runner or builder recorded for a call (it
 *   remembers its last hit per mode).
 * - UnaryRunner: an imperative call of a shared one-output kernel on one input (the builder
 *   runs it directly).
 * - holding, clear_array, release_array_bytes, release_handle: SyncedArray's kernel-output
 *   constructor, its clear and finalizer, and Variable's finalizer (they run per call).
 * - track, track_graph: hand loose (untracked) auto-forward nodes back to the garbage
 *   collector before something may close a cycle through them (see "Loose graphs").
 *
 * The classes stay the Python ones (nnabla/_array.py, _variable.py, function.py); this
 * module fills their __slots__ directly, at the offsets their member descriptors give
 * (bind_array, bind_nodes and bind_function read them once), instead of through Python
 * bytecode. What each object holds afterwards is exactly what the Python constructors make
 * (tests/core/test_auto_forward_nodes.py compares every slot).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) { Py_INCREF(o); return o; }
static inline PyObject *Py_XNewRef(PyObject *o) { Py_XINCREF(o); return o; }
#endif

/* -- slots by offset ------------------------------------------------------------------- */

/* The offset of the __slots__ member ``name`` of ``type``; -1 with an error set. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    if (Py_TYPE(descr) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "_native_graph: %s.%s is not a __slots__ member",
                     type->tp_name, name);
        Py_DECREF(descr);
        return -1;
    }
    PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
    Py_ssize_t offset = def->type == T_OBJECT_EX ? def->offset : -1;
    Py_DECREF(descr);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "_native_graph: %s.%s is not an object slot",
                     type->tp_name, name);
    return offset;
}

/* Garbage collection. Objects that cannot be part of a reference cycle are left to
 * reference counting alone (untracked, as CPython does with tuples and dicts of atoms), so
 * the collector's generations fill more slowly on long auto-forward graphs:
 * - a weak reference without a callback holds nothing strongly;
 * - a Function's tuple of weak references to its outputs;
 * - a SyncedArray made here: it holds its shape, dtype, a dict of family arrays, and
 *   numbers; anything the Python methods store later is a weak reference or an array.
 * - the VarNode, Function and inputs' tuple the auto-forward builder makes, while nothing
 *   tracked lies upstream (see "Loose graphs" below).
 * The inputs' and outputs' containers are tuples: CPython reuses them from its free list
 * without counting them as new objects for the collector's thresholds.
 *
 * Loose graphs. What a builder-made VarNode and Function hold strongly is their inputs'
 * nodes (upstream), arrays, and objects every call of the site shares (spec, kernel,
 * context, dtypes); nothing there reaches a node downstream, so no cycle passes through
 * them and reference counting frees them exactly. They are made untracked ("loose") when
 * every input node is a leaf or has a loose parent; the collector then neither counts
 * their cost in its young collections nor walks them. A cycle needs a user object on a
 * Function (its tags) or a re-linked parent: Function.tags, _graph.set_parent and
 * _graph.rewire_on call track_graph first, which tracks the function (or node) and every
 * loose node, function and inputs' tuple downstream of it. The invariant that makes this
 * enough: everything downstream of a tracked function is tracked (the builder makes a
 * node loose only below loose parents; functions made in Python are tracked). */

/* Untrack a weak reference made here (no callback); a weak reference CPython shares
 * between callers (the object's first plain one) may already be untracked. */
static inline void untrack_weakref(PyObject *ref)
{
    if (PyObject_GC_IsTracked(ref))
        PyObject_GC_UnTrack(ref);
}

/* The object weak reference ``ref`` refers to, for identity tests only (Py_None when it is
 * dead; no reference is held). */
static inline PyObject *weak_target(PyObject *ref)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *obj;
    int alive = PyWeakref_GetRef(ref, &obj);
    if (alive <= 0) {
        PyErr_Clear();
        return Py_None;
    }
    Py_DECREF(obj);             /* still alive: held elsewhere, and the GIL is held */
    return obj;
#else
    return PyWeakref_GetObject(ref);
#endif
}

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* Store a new reference to ``value`` in a slot (the slot's old value is released). */
static inline void set_slot(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject *old = SLOT(obj, offset);
    SLOT(obj, offset) = Py_NewRef(value);
    Py_XDECREF(old);
}

/* Store ``value``, stealing the reference, in a slot of a fresh (all-NULL) object. */
static inline void init_slot(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    SLOT(obj, offset) = value;
}

/* Read a slot; a borrowed reference, or NULL with AttributeError when it is unset. */
static inline PyObject *get_slot(PyObject *obj, Py_ssize_t offset, const char *name)
{
    PyObject *v = SLOT(obj, offset);
    if (v == NULL)
        PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'",
                     Py_TYPE(obj)->tp_name, name);
    return v;
}

/* The graph classes' slot offsets and the module's constants (bind_nodes, bind_function,
 * bind_dispatch, module init). */
static struct graph_state {
    PyTypeObject *node, *function, *variable;
    PyObject *state;            /* _state.STATE */
    PyObject *empty_name;       /* "" */
    PyObject *zero, *one, *str_dtype, *str_shape, *str_get;
    PyObject *release_uncommon;     /* _variable._release_uncommon(node) */
    struct { Py_ssize_t data, grad, parent, need_grad, persistent, recompute, name, owner,
             needed, auto_, refs, stop; } n;
    struct { Py_ssize_t spec, args, ctx, binding, kernel, family, in_nodes, out_refs, tags,
             name, in_dtypes, out_dtypes, grad_dtype, before_forward; } f;
    Py_ssize_t var_node, graph_version, global_recompute, auto_forward, context_stack,
        default_context;
    /* the F.* wrappers' fast paths (bind_dispatch) */
    PyTypeObject *ndarray, *context;
    Py_ssize_t nd_array, ctx_backend, ctx_device_id;
    Py_ssize_t registry_version;    /* -1: read by attribute (a registry without that slot) */
    PyObject *runners, *builders, *registry;
    PyObject *str_backend, *str_device_id, *str_version;
} G;

/* -- SyncedArray ----------------------------------------------------------------------- */

static struct array_state {
    PyTypeObject *type;
    PyObject *no_heads;         /* _array.NO_HEADS: the heads of an array holding none */
    Py_ssize_t shape, dtype, heads, fill_value, modification_count, clear_called,
        nbytes_held, narrowed, typed, sharers, provisional;
} A;

static PyObject *bind_array(PyObject *self, PyObject *args)
{
    PyTypeObject *type;
    PyObject *no_heads;
    if (!PyArg_ParseTuple(args, "O!O:bind_array", &PyType_Type, &type, &no_heads))
        return NULL;
    /* all offsets or none: a failed bind leaves the module as it was */
    struct array_state saved = A;
#define OFF(field) if ((A.field = slot_offset(type, #field)) < 0) { A = saved; return NULL; }
    OFF(shape); OFF(dtype); OFF(heads); OFF(fill_value); OFF(modification_count);
    OFF(clear_called); OFF(nbytes_held); OFF(narrowed); OFF(typed); OFF(sharers);
    OFF(provisional);
#undef OFF
    Py_XSETREF(A.type, (PyTypeObject *)Py_NewRef((PyObject *)type));
    Py_XSETREF(A.no_heads, Py_NewRef(no_heads));
    Py_RETURN_NONE;
}

/* The memory counters: bytes held by every SyncedArray's heads, and their peak since the
 * last reset_peak_memory (memory_stats reads them). One pair for the process, as the
 * arrays' bytes are counted wherever they change: here and in nnabla/_array.py (account). */
static long long mem_in_use, mem_peak;

static inline void count_bytes(long long delta)
{
    mem_in_use += delta;
    if (mem_in_use > mem_peak)
        mem_peak = mem_in_use;
}

/* Count ``nbytes`` (a Python int) in, or out with ``release``; 0, or -1 with an error set. */
static int account(PyObject *nbytes, int release)
{
    long long n = PyLong_AsLongLong(nbytes);
    if (n == -1 && PyErr_Occurred())
        return -1;
    count_bytes(release ? -n : n);
    return 0;
}

static PyObject *account_py(PyObject *self, PyObject *delta)
{
    if (!PyLong_Check(delta)) {
        PyErr_Format(PyExc_TypeError, "account(delta): an int expected, got %.100s",
                     Py_TYPE(delta)->tp_name);
        return NULL;
    }
    if (account(delta, 0) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *memory_stats(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("{sLsL}", "in_use", mem_in_use, "peak", mem_peak);
}

static PyObject *reset_peak_memory(PyObject *self, PyObject *unused)
{
    mem_peak = mem_in_use;
    Py_RETURN_NONE;
}

/* A new SyncedArray of ``shape`` whose only head is ``arr`` under ``key`` ((family, dtype)),
 * ``nbytes`` big: what SyncedArray(shape, dtype) followed by put(key, arr, nbytes) makes. */
static PyObject *make_holding(PyObject *shape, PyObject *key, PyObject *arr, PyObject *nbytes)
{
    if (A.type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_native_graph: bind_array was not called");
        return NULL;
    }
    if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2) {
        PyErr_SetString(PyExc_TypeError, "_native_graph.holding: key must be (family, dtype)");
        return NULL;
    }
    PyObject *heads = PyDict_New();
    if (heads == NULL || PyDict_SetItem(heads, key, arr) < 0 || account(nbytes, 0) < 0) {
        Py_XDECREF(heads);
        return NULL;
    }
    PyObject *a = A.type->tp_alloc(A.type, 0);
    if (a == NULL) {
        Py_DECREF(heads);
        return NULL;
    }
    init_slot(a, A.shape, Py_NewRef(shape));
    init_slot(a, A.dtype, Py_NewRef(PyTuple_GET_ITEM(key, 1)));
    init_slot(a, A.heads, heads);
    init_slot(a, A.fill_value, Py_NewRef(Py_None));
    init_slot(a, A.narrowed, Py_NewRef(Py_None));
    init_slot(a, A.sharers, Py_NewRef(Py_None));
    init_slot(a, A.provisional, Py_NewRef(Py_None));
    init_slot(a, A.modification_count, Py_NewRef(G.one));
    init_slot(a, A.clear_called, Py_NewRef(Py_False));
    init_slot(a, A.typed, Py_NewRef(Py_False));
    init_slot(a, A.nbytes_held, Py_NewRef(nbytes));
    PyObject_GC_UnTrack(a);     /* see "Garbage collection" at the top */
    return a;
}

static PyObject *holding(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "holding() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    return make_holding(args[0], args[1], args[2], args[3]);
}

/* -- graph nodes ----------------------------------------------------------------------- */


static PyObject *bind_nodes(PyObject *self, PyObject *args)
{
    PyTypeObject *node, *variable;
    PyObject *release_uncommon;
    if (!PyArg_ParseTuple(args, "O!O!O:bind_nodes", &PyType_Type, &node, &PyType_Type,
                          &variable, &release_uncommon))
        return NULL;
    struct graph_state saved = G;          /* all offsets or none */
#define OFF(dst, type, name) \
    if ((dst = slot_offset(type, name)) < 0) { G = saved; return NULL; }
    OFF(G.n.data, node, "data"); OFF(G.n.grad, node, "_grad"); OFF(G.n.parent, node, "parent");
    OFF(G.n.need_grad, node, "need_grad"); OFF(G.n.persistent, node, "persistent");
    OFF(G.n.recompute, node, "recompute"); OFF(G.n.name, node, "name");
    OFF(G.n.owner, node, "owner"); OFF(G.n.needed, node, "needed");
    OFF(G.n.auto_, node, "auto"); OFF(G.n.refs, node, "refs"); OFF(G.n.stop, node, "stop");
    OFF(G.var_node, variable, "_node");
#undef OFF
    Py_XSETREF(G.node, (PyTypeObject *)Py_NewRef((PyObject *)node));
    Py_XSETREF(G.variable, (PyTypeObject *)Py_NewRef((PyObject *)variable));
    Py_XSETREF(G.release_uncommon, Py_NewRef(release_uncommon));
    Py_RETURN_NONE;
}

static PyObject *bind_function(PyObject *self, PyObject *args)
{
    PyTypeObject *function;
    PyObject *state;
    if (!PyArg_ParseTuple(args, "O!O:bind_function", &PyType_Type, &function, &state))
        return NULL;
    struct graph_state saved = G;          /* all offsets or none */
#define OFF(dst, type, name) \
    if ((dst = slot_offset(type, name)) < 0) { G = saved; return NULL; }
    OFF(G.f.spec, function, "spec"); OFF(G.f.args, function, "_args");
    OFF(G.f.ctx, function, "ctx"); OFF(G.f.binding, function, "binding");
    OFF(G.f.kernel, function, "kernel"); OFF(G.f.family, function, "family");
    OFF(G.f.in_nodes, function, "in_nodes"); OFF(G.f.out_refs, function, "out_refs");
    OFF(G.f.tags, function, "_tags"); OFF(G.f.name, function, "_name");
    OFF(G.f.in_dtypes, function, "in_dtypes"); OFF(G.f.out_dtypes, function, "out_dtypes");
    OFF(G.f.grad_dtype, function, "grad_dtype");
    OFF(G.f.before_forward, function, "_before_forward");
    OFF(G.graph_version, Py_TYPE(state), "graph_version");
    OFF(G.global_recompute, Py_TYPE(state), "global_recompute");
    OFF(G.auto_forward, Py_TYPE(state), "auto_forward");
    OFF(G.context_stack, Py_TYPE(state), "context_stack");
    OFF(G.default_context, Py_TYPE(state), "default_context");
#undef OFF
    Py_XSETREF(G.function, (PyTypeObject *)Py_NewRef((PyObject *)function));
    Py_XSETREF(G.state, Py_NewRef(state));
    Py_RETURN_NONE;
}

/* -- finalizers ------------------------------------------------------------------------ */

/* SyncedArray.__del__: the bytes its heads held leave the memory counters. */
static PyObject *release_array_bytes(PyObject *self, PyObject *unused)
{
    if (A.type == NULL || !PyObject_TypeCheck(self, A.type))
        Py_RETURN_NONE;
    PyObject *nbytes = SLOT(self, A.nbytes_held);
    if (nbytes == NULL)                 /* the constructor did not finish */
        Py_RETURN_NONE;
    int held = PyObject_IsTrue(nbytes);
    if (held < 0 || (held && account(nbytes, 1) < 0))
        return NULL;
    Py_RETURN_NONE;
}

/* SyncedArray.clear: release the memory; the contents become undefined (read as zeros). */
static PyObject *clear_array(PyObject *self, PyObject *unused)
{
    if (A.type == NULL || !PyObject_TypeCheck(self, A.type)) {
        PyErr_SetString(PyExc_TypeError, "clear: a SyncedArray expected");
        return NULL;
    }
    PyObject *heads = get_slot(self, A.heads, "heads");
    if (heads == NULL)
        return NULL;
    int any = PyObject_IsTrue(heads);
    if (any < 0)
        return NULL;
    if (any) {
        set_slot(self, A.typed, Py_True);
        set_slot(self, A.heads, A.no_heads);
    }
    PyObject *nbytes = get_slot(self, A.nbytes_held, "nbytes_held");
    int held = nbytes == NULL ? -1 : PyObject_IsTrue(nbytes);
    if (held < 0 || (held && account(nbytes, 1) < 0))
        return NULL;
    if (held)
        set_slot(self, A.nbytes_held, G.zero);
    set_slot(self, A.fill_value, Py_None);
    set_slot(self, A.clear_called, Py_True);
    Py_RETURN_NONE;
}

/* SyncedArray.put(key, arr, nbytes): install ``arr`` (a kernel's output) as the only head,
 * under ``key`` ((family, dtype)), ``nbytes`` big; what set() does with both known. */
static PyObject *put_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (A.type == NULL || !PyObject_TypeCheck(self, A.type)) {
        PyErr_SetString(PyExc_TypeError, "put: a SyncedArray expected");
        return NULL;
    }
    if (nargs != 3 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 2
            || !PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "put(key, arr, nbytes): key a (family, dtype) tuple, nbytes an int");
        return NULL;
    }
    PyObject *key = args[0], *arr = args[1], *nbytes = args[2];
    PyObject *held = get_slot(self, A.nbytes_held, "nbytes_held");
    PyObject *count = get_slot(self, A.modification_count, "modification_count");
    if (held == NULL || count == NULL)
        return NULL;
    long long n = PyLong_AsLongLong(nbytes), h = PyLong_AsLongLong(held);
    if ((n == -1 || h == -1) && PyErr_Occurred())
        return NULL;
    PyObject *next = PyNumber_Add(count, G.one);
    PyObject *heads = next == NULL ? NULL : PyDict_New();
    if (heads == NULL || PyDict_SetItem(heads, key, arr) < 0) {
        Py_XDECREF(next);
        Py_XDECREF(heads);
        return NULL;
    }
    count_bytes(n - h);
    set_slot(self, A.heads, heads);
    Py_DECREF(heads);
    set_slot(self, A.nbytes_held, nbytes);
    set_slot(self, A.fill_value, Py_None);
    set_slot(self, A.dtype, PyTuple_GET_ITEM(key, 1));
    set_slot(self, A.modification_count, next);
    Py_DECREF(next);
    set_slot(self, A.clear_called, Py_False);
    Py_RETURN_NONE;
}

/* Whether slot ``offset`` of ``obj`` holds a true value (an unset slot raises, as Python
 * reading it would): 1, 0, or -1 with an error set. */
static inline int slot_true(PyObject *obj, Py_ssize_t offset, const char *name)
{
    PyObject *v = get_slot(obj, offset, name);
    if (v == Py_True)
        return 1;
    if (v == Py_False || v == Py_None)
        return 0;
    return v == NULL ? -1 : PyObject_IsTrue(v);
}

/* Variable.__del__: when the last handle of a node made in auto-forward mode goes away and
 * no backward pass reads its data, the data is released (SyncedArray.clear). Arrays shared
 * with other nodes, narrowed, or windows on another array take the Python path
 * (nnabla._variable._release_uncommon). The node forgets the dead handle either way. */
static PyObject *release_handle(PyObject *self, PyObject *unused)
{
    if (G.variable == NULL || !PyObject_TypeCheck(self, G.variable))
        Py_RETURN_NONE;
    PyObject *node = SLOT(self, G.var_node);
    if (node == NULL)                   /* the constructor raised */
        Py_RETURN_NONE;
    PyObject *owner = SLOT(node, G.n.owner);
    if (owner != NULL && PyWeakref_Check(owner) && weak_target(owner) == self)
        set_slot(node, G.n.owner, Py_None);     /* the graph keeps no dead weak reference */
    /* node.auto and not node.needed and not node.persistent and node.parent is not None */
    int flag = slot_true(node, G.n.auto_, "auto");
    if (flag == 1) {
        int needed = slot_true(node, G.n.needed, "needed");
        flag = needed < 0 ? -1 : !needed;
    }
    if (flag == 1) {
        int persistent = slot_true(node, G.n.persistent, "persistent");
        flag = persistent < 0 ? -1 : !persistent;
    }
    if (flag == 1) {
        PyObject *parent = get_slot(node, G.n.parent, "parent");
        flag = parent == NULL ? -1 : parent != Py_None;
    }
    if (flag < 0)
        return NULL;
    if (flag == 0)
        Py_RETURN_NONE;
    PyObject *data = get_slot(node, G.n.data, "data");
    if (data == NULL)
        return NULL;
    if (Py_TYPE(data) == A.type && SLOT(data, A.sharers) == Py_None
            && SLOT(data, A.narrowed) == Py_None)
        return clear_array(data, NULL);
    return PyObject_CallOneArg(G.release_uncommon, node);
}

/* Record the weak reference ``ref`` of a new consumer in ``node.refs``: the forms are those
 * of nnabla._graph.add_consumer (an empty tuple, one weak reference, or a list that drops
 * its dead references whenever it reaches a power of two from 16). */
static int add_consumer(PyObject *node, PyObject *ref)
{
    PyObject *refs = get_slot(node, G.n.refs, "refs");
    if (refs == NULL)
        return -1;
    if (!PyList_CheckExact(refs)) {
        if (PyTuple_CheckExact(refs) || weak_target(refs) == Py_None) {
            set_slot(node, G.n.refs, ref);
            return 0;
        }
        PyObject *pair = PyList_New(2);
        if (pair == NULL)
            return -1;
        PyList_SET_ITEM(pair, 0, Py_NewRef(refs));
        PyList_SET_ITEM(pair, 1, Py_NewRef(ref));
        set_slot(node, G.n.refs, pair);
        Py_DECREF(pair);
        return 0;
    }
    if (PyList_Append(refs, ref) < 0)
        return -1;
    Py_ssize_t size = PyList_GET_SIZE(refs);
    if (size >= 16 && !(size & (size - 1))) {
        Py_ssize_t kept = 0;
        for (Py_ssize_t i = 0; i < size; i++) {
            PyObject *r = PyList_GET_ITEM(refs, i);
            if (weak_target(r) != Py_None) {
                Py_INCREF(r);
                PyList_SetItem(refs, kept++, r);     /* releases the item it replaces */
            }
        }
        if (PyList_SetSlice(refs, kept, size, NULL) < 0)
            return -1;
    }
    return 0;
}

static PyObject *add_consumer_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "add_consumer() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (G.node == NULL || !PyObject_TypeCheck(args[0], G.node) || !PyWeakref_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "add_consumer(node, ref): a VarNode and a weak "
                        "reference expected");
        return NULL;
    }
    if (add_consumer(args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* -- loose graphs (see "Garbage collection" at the top) --------------------------------- */

/* Whether a node made from input ``node`` may be loose: the input is a leaf or its parent
 * is loose. */
static inline int below_loose(PyObject *node)
{
    PyObject *parent = SLOT(node, G.n.parent);
    return parent == NULL || parent == Py_None || !PyObject_GC_IsTracked(parent);
}

static inline void track(PyObject *obj)
{
    if (PyObject_IS_GC(obj) && !PyObject_GC_IsTracked(obj))
        PyObject_GC_Track(obj);
}

/* Track ``node`` and push its live loose consumers (its weak references in ``refs``) on
 * ``todo``; 0, or -1 with an error set. */
static int visit_node(PyObject *node, PyObject *todo)
{
    track(node);
    PyObject *refs = SLOT(node, G.n.refs);
    if (refs == NULL)
        return 0;
    int list = PyList_CheckExact(refs), failed = 0;
    if (!list && !PyWeakref_Check(refs))
        return 0;
    Py_INCREF(refs);            /* appending may collect, and a finalizer may edit the graph */
    for (Py_ssize_t i = 0; !failed && i < (list ? PyList_GET_SIZE(refs) : 1); i++) {
        PyObject *g = weak_target(list ? PyList_GET_ITEM(refs, i) : refs);
        failed = g != Py_None && PyObject_TypeCheck(g, G.function)
                 && !PyObject_GC_IsTracked(g) && PyList_Append(todo, g) < 0;
    }
    Py_DECREF(refs);
    return failed ? -1 : 0;
}

/* track(node): track one loose VarNode (its data is being handed out, and
 * Variable.get_number_of_references finds the nodes holding an array among the
 * collector's referrers). */
static PyObject *track_node(PyObject *self, PyObject *node)
{
    if (G.node == NULL || !PyObject_TypeCheck(node, G.node)) {
        PyErr_Format(PyExc_TypeError, "track: a VarNode expected, got %.100s",
                     Py_TYPE(node)->tp_name);
        return NULL;
    }
    track(node);
    Py_RETURN_NONE;
}

/* track_graph(obj): track ``obj`` (a Function or a VarNode) and every loose node, function
 * and inputs' tuple downstream of it, before something may close a cycle through it. */
static PyObject *track_graph(PyObject *self, PyObject *obj)
{
    if (G.node == NULL || G.function == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_native_graph: bind_nodes was not called");
        return NULL;
    }
    int is_node = PyObject_TypeCheck(obj, G.node);
    if (!is_node && !PyObject_TypeCheck(obj, G.function)) {
        PyErr_Format(PyExc_TypeError, "track_graph: a VarNode or a Function expected, got %.100s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyObject *todo = PyList_New(0);
    if (todo == NULL)
        return NULL;
    if (is_node) {
        if (visit_node(obj, todo) < 0)
            goto fail;
    } else if (!PyObject_GC_IsTracked(obj) && PyList_Append(todo, obj) < 0) {
        goto fail;
    }
    while (PyList_GET_SIZE(todo)) {
        Py_ssize_t last = PyList_GET_SIZE(todo) - 1;
        PyObject *f = Py_NewRef(PyList_GET_ITEM(todo, last));
        if (PyList_SetSlice(todo, last, last + 1, NULL) < 0) {
            Py_DECREF(f);
            goto fail;
        }
        if (PyObject_GC_IsTracked(f)) {         /* reached twice */
            Py_DECREF(f);
            continue;
        }
        PyObject_GC_Track(f);
        PyObject *in_nodes = SLOT(f, G.f.in_nodes), *out_refs = SLOT(f, G.f.out_refs);
        if (in_nodes != NULL)
            track(in_nodes);
        int failed = 0;
        if (out_refs != NULL && (PyTuple_Check(out_refs) || PyList_Check(out_refs))) {
            Py_INCREF(out_refs);        /* (as in visit_node) */
            for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(out_refs) && !failed; i++) {
                PyObject *ref = PySequence_Fast_ITEMS(out_refs)[i];
                PyObject *node = PyWeakref_Check(ref) ? weak_target(ref) : Py_None;
                if (node != Py_None && PyObject_TypeCheck(node, G.node)) {
                    Py_INCREF(node);
                    failed = visit_node(node, todo) < 0;
                    Py_DECREF(node);
                }
            }
            Py_DECREF(out_refs);
        }
        Py_DECREF(f);
        if (failed)
            goto fail;
    }
    Py_DECREF(todo);
    Py_RETURN_NONE;
fail:
    Py_DECREF(todo);
    return NULL;
}

/* STATE.graph_version += 1 */
static int bump_graph_version(void)
{
    PyObject *v = get_slot(G.state, G.graph_version, "graph_version");
    if (v == NULL)
        return -1;
    PyObject *next = PyNumber_Add(v, G.one);
    if (next == NULL)
        return -1;
    PyObject *old = SLOT(G.state, G.graph_version);
    SLOT(G.state, G.graph_version) = next;
    Py_DECREF(old);
    return 0;
}

/* -- the unary runner ------------------------------------------------------------------ */

/* run(arrays) -> SyncedArray: an imperative call of a shared one-output kernel on one input
 * (see nnabla._execute.imperative_runner, which makes it). The kernel reads the input's head
 * under key_in (synchronised from another head when missing); its output is held as it
 * came when it has the planned array type, dtype and shape, and handed to ``stored`` (the
 * general store) otherwise. The auto-forward builder calls it directly. */
/* The most operands a forward_ufunc may carry (nnabla._execute.direct_forward reads it). */
#define MAX_UFUNC_OPERANDS 7

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *key_in;           /* (family, input dtype) */
    PyObject *fwd;              /* the kernel's forward(list of arrays) -> outputs */
    PyObject *array_type, *shape, *key, *nbytes;   /* the output: key is (family, dtype) */
    PyObject *stored;           /* stored(y) -> SyncedArray */
    PyObject *ufunc;            /* the kernel's forward_ufunc (f, *operands), or None */
} UnaryRunner;

static PyTypeObject UnaryRunnerType;

static void unary_runner_dealloc(UnaryRunner *r)
{
    PyObject_GC_UnTrack(r);
    Py_CLEAR(r->key_in); Py_CLEAR(r->fwd); Py_CLEAR(r->array_type); Py_CLEAR(r->shape);
    Py_CLEAR(r->key); Py_CLEAR(r->nbytes); Py_CLEAR(r->stored); Py_CLEAR(r->ufunc);
    PyObject_GC_Del(r);
}

static int unary_runner_traverse(UnaryRunner *r, visitproc visit, void *arg)
{
    Py_VISIT(r->key_in); Py_VISIT(r->fwd); Py_VISIT(r->array_type); Py_VISIT(r->shape);
    Py_VISIT(r->key); Py_VISIT(r->nbytes); Py_VISIT(r->stored); Py_VISIT(r->ufunc);
    return 0;
}

/* The kernel's input: ``a``'s head under key_in, or a.get(dtype, family) when it has none.
 * A new reference, or NULL with an error set. */
static PyObject *input_head(UnaryRunner *r, PyObject *a)
{
    PyObject *head = NULL;
    if (Py_TYPE(a) == A.type) {         /* a window's heads are a property: see below */
        PyObject *heads = get_slot(a, A.heads, "heads");
        if (heads == NULL)
            return NULL;
        head = PyDict_CheckExact(heads) ? PyDict_GetItemWithError(heads, r->key_in) : NULL;
        if (head != NULL)
            return Py_NewRef(head);
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_CallMethodObjArgs(a, G.str_get, PyTuple_GET_ITEM(r->key_in, 1),
                                      PyTuple_GET_ITEM(r->key_in, 0), NULL);
}

static PyObject *run_unary(UnaryRunner *r, PyObject *a)
{
    PyObject *head = input_head(r, a);
    if (head == NULL)
        return NULL;
    PyObject *y;
    if (r->ufunc != Py_None) {          /* f(head, *operands), instead of forward([head]) */
        PyObject *args[MAX_UFUNC_OPERANDS + 1];
        Py_ssize_t n = PyTuple_GET_SIZE(r->ufunc);
        args[0] = head;
        for (Py_ssize_t i = 1; i < n; i++)
            args[i] = PyTuple_GET_ITEM(r->ufunc, i);
        y = PyObject_Vectorcall(PyTuple_GET_ITEM(r->ufunc, 0), args, n, NULL);
        Py_DECREF(head);
    } else {
        PyObject *list = PyList_New(1);
        if (list == NULL) {
            Py_DECREF(head);
            return NULL;
        }
        PyList_SET_ITEM(list, 0, head);
        PyObject *ys = PyObject_CallOneArg(r->fwd, list);
        Py_DECREF(list);
        if (ys == NULL)
            return NULL;
        y = PySequence_GetItem(ys, 0);
        Py_DECREF(ys);
    }
    if (y == NULL)
        return NULL;
    PyObject *data = NULL;
    if ((PyObject *)Py_TYPE(y) == r->array_type) {
        PyObject *dtype = PyObject_GetAttr(y, G.str_dtype);
        PyObject *shape = dtype == NULL ? NULL : PyObject_GetAttr(y, G.str_shape);
        int same = -1;
        if (shape != NULL)
            same = dtype == PyTuple_GET_ITEM(r->key, 1)
                       ? PyObject_RichCompareBool(shape, r->shape, Py_EQ) : 0;
        Py_XDECREF(dtype);
        Py_XDECREF(shape);
        if (same < 0) {
            Py_DECREF(y);
            return NULL;
        }
        if (same)
            data = make_holding(r->shape, r->key, y, r->nbytes);
    }
    if (data == NULL && !PyErr_Occurred())
        data = PyObject_CallOneArg(r->stored, y);
    Py_DECREF(y);
    return data;
}

/* runner(arrays): arrays a list or tuple of one SyncedArray */
static PyObject *unary_runner_call(UnaryRunner *r, PyObject *const *argv, size_t nargsf,
                                   PyObject *kwnames)
{
    PyObject *arrays = PyVectorcall_NARGS(nargsf) == 1 ? argv[0] : NULL;
    if (arrays == NULL || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))
            || !(PyList_CheckExact(arrays) || PyTuple_CheckExact(arrays))
            || PySequence_Fast_GET_SIZE(arrays) != 1) {
        PyErr_SetString(PyExc_TypeError, "runner(arrays): a list or tuple of one array");
        return NULL;
    }
    return run_unary(r, PySequence_Fast_ITEMS(arrays)[0]);
}

static PyObject *unary_runner_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"key_in", "fwd", "array_type", "shape", "key", "nbytes", "stored",
                            "ufunc", NULL};
    PyObject *key_in, *fwd, *array_type, *shape, *key, *nbytes, *stored, *ufunc = Py_None;
    if (A.type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_native_graph: bind_array was not called");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OOO!O!OO|O:UnaryRunner", names, &PyTuple_Type,
                                     &key_in, &fwd, &array_type, &PyTuple_Type, &shape,
                                     &PyTuple_Type, &key, &nbytes, &stored, &ufunc))
        return NULL;
    if (ufunc != Py_None && !(PyTuple_Check(ufunc) && PyTuple_GET_SIZE(ufunc) >= 1
                              && PyTuple_GET_SIZE(ufunc) <= MAX_UFUNC_OPERANDS + 1
                              && PyCallable_Check(PyTuple_GET_ITEM(ufunc, 0)))) {
        PyErr_Format(PyExc_TypeError,
                     "UnaryRunner: ufunc must be None or (callable, *operands), at most %d "
                     "operands", MAX_UFUNC_OPERANDS);
        return NULL;
    }
    if (PyTuple_GET_SIZE(key_in) != 2 || PyTuple_GET_SIZE(key) != 2) {
        PyErr_SetString(PyExc_TypeError, "UnaryRunner: key_in and key must be (family, dtype)");
        return NULL;
    }
    UnaryRunner *r = PyObject_GC_New(UnaryRunner, type);
    if (r == NULL)
        return NULL;
    r->vectorcall = (vectorcallfunc)unary_runner_call;
    r->key_in = Py_NewRef(key_in); r->fwd = Py_NewRef(fwd);
    r->array_type = Py_NewRef(array_type); r->shape = Py_NewRef(shape);
    r->key = Py_NewRef(key); r->nbytes = Py_NewRef(nbytes); r->stored = Py_NewRef(stored);
    r->ufunc = Py_NewRef(ufunc);
    PyObject_GC_Track(r);
    return (PyObject *)r;
}

static PyTypeObject UnaryRunnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "nnabla._native_graph.UnaryRunner",
    .tp_basicsize = sizeof(UnaryRunner),
    .tp_dealloc = (destructor)unary_runner_dealloc,
    .tp_vectorcall_offset = offsetof(UnaryRunner, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "UnaryRunner(key_in, fwd, array_type, shape, key, nbytes, stored, ufunc=None): "
              "runner([array]) -> SyncedArray, an imperative call of a shared one-output "
              "kernel on one input (see nnabla._execute.imperative_runner).",
    .tp_traverse = (traverseproc)unary_runner_traverse,
    .tp_new = unary_runner_new,
};

/* runner([a]) for any runner: a unary one directly, another through a call. */
static PyObject *run_one(PyObject *runner, PyObject *a)
{
    if (Py_TYPE(runner) == &UnaryRunnerType)
        return run_unary((UnaryRunner *)runner, a);
    PyObject *list = PyList_New(1);
    if (list == NULL)
        return NULL;
    PyList_SET_ITEM(list, 0, Py_NewRef(a));
    PyObject *data = PyObject_CallOneArg(runner, list);
    Py_DECREF(list);
    return data;
}

/* -- the auto-forward builder ---------------------------------------------------------- */

/* The auto-forward builder of one (function, shapes, arguments, context) call: see
 * nnabla._dispatch._graph_builder, which makes it. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *spec, *args, *binding, *kernel, *family, *in_dtypes, *out_dtypes, *grad_dtype;
    PyObject *runner;           /* runner(list of SyncedArray or None) -> SyncedArray */
    PyObject *link, *mark_needed;
    int unary, differentiable;
} Builder;

static void builder_dealloc(Builder *b)
{
    PyObject_GC_UnTrack(b);
    Py_CLEAR(b->spec); Py_CLEAR(b->args); Py_CLEAR(b->binding); Py_CLEAR(b->kernel);
    Py_CLEAR(b->family); Py_CLEAR(b->in_dtypes); Py_CLEAR(b->out_dtypes);
    Py_CLEAR(b->grad_dtype); Py_CLEAR(b->runner); Py_CLEAR(b->link);
    Py_CLEAR(b->mark_needed);
    PyObject_GC_Del(b);
}

static int builder_traverse(Builder *b, visitproc visit, void *arg)
{
    Py_VISIT(b->spec); Py_VISIT(b->args); Py_VISIT(b->binding); Py_VISIT(b->kernel);
    Py_VISIT(b->family); Py_VISIT(b->in_dtypes); Py_VISIT(b->out_dtypes);
    Py_VISIT(b->grad_dtype); Py_VISIT(b->runner); Py_VISIT(b->link);
    Py_VISIT(b->mark_needed);
    return 0;
}

/* builder(in_nodes, ctx) -> Variable */
static PyObject *builder_call(Builder *b, PyObject *const *argv, size_t nargsf,
                              PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "builder(in_nodes, ctx) takes two arguments");
        return NULL;
    }
    PyObject *in_nodes = argv[0], *ctx = argv[1];
    if (!PyList_CheckExact(in_nodes) && !PyTuple_CheckExact(in_nodes)) {
        PyErr_SetString(PyExc_TypeError, "builder: in_nodes must be a list or a tuple");
        return NULL;
    }
    Py_ssize_t n_in = PySequence_Fast_GET_SIZE(in_nodes);
    PyObject **nodes = PySequence_Fast_ITEMS(in_nodes);
    int need_grad = 0, loose = 1;       /* see "Loose graphs" at the top */
    PyObject *data = NULL, *x = NULL;
    if (b->unary) {
        if (n_in != 1) {
            PyErr_SetString(PyExc_TypeError, "builder: one input node expected");
            return NULL;
        }
        x = nodes[0];
        if (!PyObject_TypeCheck(x, G.node)) {
            PyErr_SetString(PyExc_TypeError, "builder: the input must be a VarNode");
            return NULL;
        }
        if (b->differentiable) {
            PyObject *ng = get_slot(x, G.n.need_grad, "need_grad");
            if (ng == NULL || (need_grad = PyObject_IsTrue(ng)) < 0)
                return NULL;
        }
        PyObject *xd = get_slot(x, G.n.data, "data");
        if (xd == NULL)
            return NULL;
        loose = below_loose(x);
        data = run_one(b->runner, xd);
    } else {
        PyObject *arrays = PyList_New(n_in);
        if (arrays == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n_in; i++) {
            PyObject *n = nodes[i];
            PyObject *d = Py_None;
            if (n != Py_None) {
                if (!PyObject_TypeCheck(n, G.node)) {
                    Py_DECREF(arrays);
                    PyErr_SetString(PyExc_TypeError, "builder: inputs must be VarNodes");
                    return NULL;
                }
                d = get_slot(n, G.n.data, "data");
                if (d == NULL) {
                    Py_DECREF(arrays);
                    return NULL;
                }
                loose = loose && below_loose(n);
                if (b->differentiable && !need_grad) {
                    PyObject *ng = get_slot(n, G.n.need_grad, "need_grad");
                    if (ng == NULL || (need_grad = PyObject_IsTrue(ng)) < 0) {
                        Py_DECREF(arrays);
                        return NULL;
                    }
                }
            }
            PyList_SET_ITEM(arrays, i, Py_NewRef(d));
        }
        data = PyObject_CallOneArg(b->runner, arrays);     /* several inputs */
        Py_DECREF(arrays);
    }
    if (data == NULL)
        return NULL;

    /* the output node and the function, as VarNode.__init__ and Function.__init__ make them */
    PyObject *recompute = get_slot(G.state, G.global_recompute, "global_recompute");
    if (recompute == NULL) {
        Py_DECREF(data);
        return NULL;
    }
    PyObject *out = G.node->tp_alloc(G.node, 0);
    if (out == NULL) {
        Py_DECREF(data);
        return NULL;
    }
    init_slot(out, G.n.data, data);
    init_slot(out, G.n.grad, Py_NewRef(Py_None));
    init_slot(out, G.n.stop, Py_NewRef(Py_None));
    init_slot(out, G.n.need_grad, Py_NewRef(need_grad ? Py_True : Py_False));
    init_slot(out, G.n.persistent, Py_NewRef(Py_False));
    init_slot(out, G.n.needed, Py_NewRef(Py_False));
    init_slot(out, G.n.recompute, Py_NewRef(recompute));
    init_slot(out, G.n.name, Py_NewRef(G.empty_name));
    init_slot(out, G.n.auto_, Py_NewRef(Py_True));
    init_slot(out, G.n.refs, PyTuple_New(0));

    PyObject *f = NULL, *out_ref = NULL, *out_refs = NULL, *v = NULL, *result = NULL;
    f = G.function->tp_alloc(G.function, 0);
    if (f == NULL)
        goto done;
    init_slot(f, G.f.spec, Py_NewRef(b->spec));
    init_slot(f, G.f.args, Py_NewRef(b->args));
    init_slot(f, G.f.ctx, Py_NewRef(ctx));
    init_slot(f, G.f.binding, Py_NewRef(b->binding));
    init_slot(f, G.f.kernel, Py_NewRef(b->kernel));
    init_slot(f, G.f.family, Py_NewRef(b->family));
    init_slot(f, G.f.in_nodes, Py_NewRef(in_nodes));
    init_slot(f, G.f.tags, Py_NewRef(Py_None));
    init_slot(f, G.f.name, Py_NewRef(Py_None));
    init_slot(f, G.f.before_forward, Py_NewRef(Py_None));
    init_slot(f, G.f.in_dtypes, Py_NewRef(b->in_dtypes));
    init_slot(f, G.f.out_dtypes, Py_NewRef(b->out_dtypes));
    init_slot(f, G.f.grad_dtype, Py_NewRef(b->grad_dtype));
    out_ref = PyWeakref_NewRef(out, NULL);
    if (out_ref == NULL || (out_refs = PyTuple_New(1)) == NULL)
        goto done;
    untrack_weakref(out_ref);
    PyTuple_SET_ITEM(out_refs, 0, Py_NewRef(out_ref));
    PyObject_GC_UnTrack(out_refs);      /* weak references only */
    init_slot(f, G.f.out_refs, out_refs);
    out_refs = NULL;

    PyObject *out_nodes = NULL;
    if (b->unary) {
        /* _graph.link(f, in_nodes, (out,)) for one input (an in-place Reshape has no
         * builder) */
        PyObject *f_ref = PyWeakref_NewRef(f, NULL);
        if (f_ref != NULL)
            untrack_weakref(f_ref);
        int failed = f_ref == NULL || add_consumer(x, f_ref) < 0;
        Py_XDECREF(f_ref);
        if (failed)
            goto done;
        init_slot(out, G.n.parent, Py_NewRef(f));
        if (bump_graph_version() < 0)
            goto done;
    } else {
        out_nodes = PyTuple_Pack(1, out);
        if (out_nodes == NULL)
            goto done;
        PyObject *r = PyObject_CallFunctionObjArgs(b->link, f, in_nodes, out_nodes, NULL);
        if (r == NULL) {
            Py_DECREF(out_nodes);
            goto done;
        }
        Py_DECREF(r);
    }
    if (need_grad) {
        if (out_nodes == NULL && (out_nodes = PyTuple_Pack(1, out)) == NULL)
            goto done;
        PyObject *r = PyObject_CallFunctionObjArgs(b->mark_needed, f, in_nodes, out_nodes,
                                                   NULL);
        Py_DECREF(out_nodes);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    } else {
        Py_XDECREF(out_nodes);
    }

    v = G.variable->tp_alloc(G.variable, 0);
    if (v == NULL)
        goto done;
    init_slot(v, G.var_node, Py_NewRef(out));
    PyObject *owner = PyWeakref_NewRef(v, NULL);
    if (owner == NULL)
        goto done;
    untrack_weakref(owner);
    init_slot(out, G.n.owner, owner);
    if (loose) {
        PyObject_GC_UnTrack(out);
        PyObject_GC_UnTrack(f);
        if (PyTuple_CheckExact(in_nodes) && PyObject_GC_IsTracked(in_nodes))
            PyObject_GC_UnTrack(in_nodes);
    }
    result = Py_NewRef(v);
done:
    Py_XDECREF(v);
    Py_XDECREF(out_refs);
    Py_XDECREF(out_ref);
    Py_XDECREF(f);
    Py_DECREF(out);
    return result;
}

static PyObject *builder_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"spec", "args", "binding", "kernel", "in_dtypes", "out_dtypes",
                            "grad_dtype", "runner", "unary", "differentiable", "link",
                            "mark_needed", NULL};
    PyObject *spec, *fargs, *binding, *kernel, *in_dtypes, *out_dtypes, *grad_dtype, *runner;
    PyObject *link, *mark_needed;
    int unary, differentiable;
    if (G.node == NULL || G.function == NULL || A.type == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "_native_graph: bind_array, bind_nodes and bind_function were not called");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOOOppOO:Builder", names, &spec, &fargs,
                                     &binding, &kernel, &in_dtypes, &out_dtypes, &grad_dtype,
                                     &runner, &unary, &differentiable, &link, &mark_needed))
        return NULL;
    PyObject *family = PyObject_GetAttrString(binding, "family");
    if (family == NULL)
        return NULL;
    Builder *b = PyObject_GC_New(Builder, type);
    if (b == NULL) {
        Py_DECREF(family);
        return NULL;
    }
    b->vectorcall = (vectorcallfunc)builder_call;
    b->spec = Py_NewRef(spec); b->args = Py_NewRef(fargs); b->binding = Py_NewRef(binding);
    b->kernel = Py_NewRef(kernel); b->family = family; b->in_dtypes = Py_NewRef(in_dtypes);
    b->out_dtypes = Py_NewRef(out_dtypes); b->grad_dtype = Py_NewRef(grad_dtype);
    b->runner = Py_NewRef(runner); b->link = Py_NewRef(link);
    b->mark_needed = Py_NewRef(mark_needed);
    b->unary = unary; b->differentiable = differentiable;
    PyObject_GC_Track(b);
    return (PyObject *)b;
}

static PyTypeObject BuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "nnabla._native_graph.Builder",
    .tp_basicsize = sizeof(Builder),
    .tp_dealloc = (destructor)builder_dealloc,
    .tp_vectorcall_offset = offsetof(Builder, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Builder(spec, args, binding, kernel, in_dtypes, out_dtypes, grad_dtype, "
              "runner, unary, differentiable, link, mark_needed): "
              "builder(in_nodes, ctx) -> Variable, an auto-forward call of a shared "
              "one-output kernel (see nnabla._dispatch._graph_builder).",
    .tp_traverse = (traverseproc)builder_traverse,
    .tp_new = builder_new,
};

/* -- the F.* wrappers' fast paths ----------------------------------------------------- */

static PyObject *bind_dispatch(PyObject *self, PyObject *args)
{
    PyTypeObject *ndarray, *context;
    PyObject *runners, *builders, *registry;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!:bind_dispatch", &PyType_Type, &ndarray,
                          &PyDict_Type, &runners, &PyDict_Type, &builders, &registry,
                          &PyType_Type, &context))
        return NULL;
    Py_ssize_t offset = slot_offset(ndarray, "_array");
    Py_ssize_t backend = offset < 0 ? -1 : slot_offset(context, "backend");
    Py_ssize_t device_id = backend < 0 ? -1 : slot_offset(context, "device_id");
    if (device_id < 0)
        return NULL;
    Py_ssize_t version = slot_offset(Py_TYPE(registry), "version");
    if (version < 0)
        PyErr_Clear();
    G.registry_version = version;
    G.nd_array = offset;
    G.ctx_backend = backend;
    G.ctx_device_id = device_id;
    Py_XSETREF(G.ndarray, (PyTypeObject *)Py_NewRef((PyObject *)ndarray));
    Py_XSETREF(G.context, (PyTypeObject *)Py_NewRef((PyObject *)context));
    Py_XSETREF(G.runners, Py_NewRef(runners));
    Py_XSETREF(G.builders, Py_NewRef(builders));
    Py_XSETREF(G.registry, Py_NewRef(registry));
    Py_RETURN_NONE;
}

/* -- the wrappers' fast paths ----------------------------------------------------------- */

/* A call site's memo of its last hit per mode: the runner or builder the table held for
 * these key parts (the key nnabla._dispatch._remember records: name, input shapes, argument
 * values, tuple(ctx.backend), ctx.device_id, registry version), for this context object.
 * Valid while ``epoch`` is the module's: forget_call_sites() (nnabla._state.clear_caches)
 * makes every entry stale. */
typedef struct {
    PyObject *run, *values, *shapes, *ctx, *backends, *device, *version;
    unsigned long epoch;        /* 0: empty */
} SiteEntry;

static unsigned long site_epoch = 1;

static void entry_clear(SiteEntry *e)
{
    Py_CLEAR(e->run); Py_CLEAR(e->values); Py_CLEAR(e->shapes); Py_CLEAR(e->ctx);
    Py_CLEAR(e->backends); Py_CLEAR(e->device); Py_CLEAR(e->version);
    e->epoch = 0;
}

/* Whether ``a`` and ``b`` are the same key part: one object, or equal objects of one type
 * (a comparison that fails counts as different: the table decides then). */
static int same_part(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    if (Py_TYPE(a) != Py_TYPE(b))
        return 0;
    int eq = PyObject_RichCompareBool(a, b, Py_EQ);
    if (eq < 0) {
        PyErr_Clear();
        return 0;
    }
    return eq;
}

/* Whether the items of sequence ``seq`` (a list or tuple) are the parts of tuple ``parts``. */
static int same_parts(PyObject *seq, PyObject *parts)
{
    if (!(PyList_CheckExact(seq) || PyTuple_CheckExact(seq))
            || PySequence_Fast_GET_SIZE(seq) != PyTuple_GET_SIZE(parts))
        return 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(parts); i++)
        if (!same_part(items[i], PyTuple_GET_ITEM(parts, i)))
            return 0;
    return 1;
}

/* The runner or builder recorded for a call (a new reference), NULL with no error when none
 * was (an unhashable argument included), or NULL with an error set. ``e`` is the call
 * site's entry for the mode: read first, filled from the table on a hit there. */
static PyObject *recorded(SiteEntry *e, PyObject *table, PyObject *name, PyObject *shapes,
                          PyObject *values, PyObject *ctx)
{
    PyObject *backend = NULL, *backends = NULL, *device = NULL, *version = NULL, *key = NULL;
    PyObject *run = NULL;
    /* the slots of a Context and of the registry; any other class (or an unset slot, which
     * then raises) by attribute */
    if (Py_TYPE(ctx) == G.context) {
        backend = Py_XNewRef(SLOT(ctx, G.ctx_backend));
        device = Py_XNewRef(SLOT(ctx, G.ctx_device_id));
    }
    if (G.registry_version >= 0)
        version = Py_XNewRef(SLOT(G.registry, G.registry_version));
    if ((backend == NULL && (backend = PyObject_GetAttr(ctx, G.str_backend)) == NULL)
            || (device == NULL && (device = PyObject_GetAttr(ctx, G.str_device_id)) == NULL)
            || (version == NULL
                && (version = PyObject_GetAttr(G.registry, G.str_version)) == NULL))
        goto done;
    if (e->epoch == site_epoch && e->ctx == ctx && same_parts(backend, e->backends)
            && same_part(device, e->device) && same_part(version, e->version)
            && same_parts(values, e->values) && same_parts(shapes, e->shapes)) {
        run = Py_NewRef(e->run);
        goto done;
    }
    if ((backends = PySequence_Tuple(backend)) == NULL
            || (key = PyTuple_Pack(6, name, shapes, values, backends, device, version)) == NULL)
        goto done;
    run = PyDict_GetItemWithError(table, key);
    if (run == NULL) {
        if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Clear();              /* an unhashable argument value: no fast path */
        goto done;
    }
    Py_INCREF(run);
    entry_clear(e);
    e->run = Py_NewRef(run); e->values = Py_NewRef(values); e->shapes = Py_NewRef(shapes);
    e->ctx = Py_NewRef(ctx); e->backends = Py_NewRef(backends);
    e->device = Py_NewRef(device); e->version = Py_NewRef(version);
    e->epoch = site_epoch;
done:
    Py_XDECREF(backend);
    Py_XDECREF(backends);
    Py_XDECREF(device);
    Py_XDECREF(version);
    Py_XDECREF(key);
    return run;
}

/* The fast paths of a generated F.* wrapper (nnabla._function_wrappers), for the call of
 * function ``name`` on ``inputs`` with argument ``values`` (two tuples): inputs all NdArrays,
 * the imperative runner recorded for the call, its output wrapped in a new NdArray; inputs
 * all Variables in auto-forward mode, the graph builder recorded for it. None when nothing
 * was recorded, and the wrapper takes the general path. ``entries``: the call site's two
 * entries (imperative, auto-forward). */
static PyObject *dispatch(SiteEntry *entries, PyObject *name, PyObject *inputs,
                          PyObject *values)
{
    if (G.ndarray == NULL || G.function == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_native_graph: bind_dispatch was not called");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    if (n == 0)
        Py_RETURN_NONE;
    PyTypeObject *kind = Py_TYPE(PyTuple_GET_ITEM(inputs, 0));
    int imperative = kind == G.ndarray;
    if (!imperative) {
        PyObject *on = SLOT(G.state, G.auto_forward);
        int auto_forward = on == Py_True ? 1 : on == NULL || on == Py_False ? 0
                                                                        : PyObject_IsTrue(on);
        if (auto_forward < 0)
            return NULL;
        if (kind != G.variable || !auto_forward)
            Py_RETURN_NONE;
    }
    PyObject *stack = SLOT(G.state, G.context_stack);
    if (stack == NULL || !PyList_CheckExact(stack))
        Py_RETURN_NONE;
    PyObject *ctx = PyList_GET_SIZE(stack) ? PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1)
                                           : SLOT(G.state, G.default_context);
    if (ctx == NULL)
        Py_RETURN_NONE;
    /* the inputs' arrays (imperative) or nodes (auto-forward), and their shapes */
    PyObject *held = PyTuple_New(n);    /* the imperative runner's or the builder's inputs */
    PyObject *shapes = PyTuple_New(n);
    if (held == NULL || shapes == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (Py_TYPE(x) != kind)
            goto miss;
        PyObject *item = SLOT(x, imperative ? G.nd_array : G.var_node);
        PyObject *array = item == NULL ? NULL : imperative ? item : SLOT(item, G.n.data);
        PyObject *shape = array == NULL || !PyObject_TypeCheck(array, A.type)
                              ? NULL : SLOT(array, A.shape);
        if (shape == NULL)
            goto miss;
        PyTuple_SET_ITEM(held, i, Py_NewRef(item));
        PyTuple_SET_ITEM(shapes, i, Py_NewRef(shape));
    }
    PyObject *run = recorded(&entries[!imperative],
                             imperative ? G.runners : G.builders, name, shapes, values, ctx);
    if (run == NULL) {
        if (PyErr_Occurred())
            goto fail;
        goto miss;
    }
    PyObject *result;
    if (imperative) {
        PyObject *data = n == 1 ? run_one(run, PyTuple_GET_ITEM(held, 0))
                                : PyObject_CallOneArg(run, held);
        result = data == NULL ? NULL : G.ndarray->tp_alloc(G.ndarray, 0);
        if (result != NULL)
            init_slot(result, G.nd_array, Py_NewRef(data));
        Py_XDECREF(data);
    } else {
        PyObject *call_args[2] = {held, ctx};
        result = PyObject_Vectorcall(run, call_args, 2, NULL);
    }
    Py_DECREF(run);
    Py_DECREF(held);
    Py_DECREF(shapes);
    return result;
miss:
    Py_XDECREF(held);
    Py_XDECREF(shapes);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(held);
    Py_XDECREF(shapes);
    return NULL;
}

/* CallSite(name): a generated wrapper's fast path, site(inputs, values) -> result or None,
 * read from the tables (see dispatch), remembering its last hit per mode so a repeated call
 * compares its key parts instead of hashing a key. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *name;
    SiteEntry entries[2];       /* imperative, auto-forward */
} CallSite;

static int call_site_clear(CallSite *c)
{
    Py_CLEAR(c->name);
    entry_clear(&c->entries[0]);
    entry_clear(&c->entries[1]);
    return 0;
}

static void call_site_dealloc(CallSite *c)
{
    PyObject_GC_UnTrack(c);
    call_site_clear(c);
    PyObject_GC_Del(c);
}

static int call_site_traverse(CallSite *c, visitproc visit, void *arg)
{
    Py_VISIT(c->name);
    for (int i = 0; i < 2; i++) {
        SiteEntry *e = &c->entries[i];
        Py_VISIT(e->run); Py_VISIT(e->values); Py_VISIT(e->shapes); Py_VISIT(e->ctx);
        Py_VISIT(e->backends); Py_VISIT(e->device); Py_VISIT(e->version);
    }
    return 0;
}

static PyObject *call_site_call(CallSite *c, PyObject *const *argv, size_t nargsf,
                                PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))
            || !PyTuple_CheckExact(argv[0]) || !PyTuple_CheckExact(argv[1])) {
        PyErr_SetString(PyExc_TypeError, "CallSite(inputs, values): two tuples expected");
        return NULL;
    }
    return dispatch(c->entries, c->name, argv[0], argv[1]);
}

static PyObject *call_site_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"name", NULL};
    PyObject *name;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "U:CallSite", names, &name))
        return NULL;
    CallSite *c = PyObject_GC_New(CallSite, type);
    if (c == NULL)
        return NULL;
    c->vectorcall = (vectorcallfunc)call_site_call;
    c->name = Py_NewRef(name);
    memset(c->entries, 0, sizeof(c->entries));
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

static PyTypeObject CallSiteType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "nnabla._native_graph.CallSite",
    .tp_basicsize = sizeof(CallSite),
    .tp_dealloc = (destructor)call_site_dealloc,
    .tp_vectorcall_offset = offsetof(CallSite, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "CallSite(name): site(inputs, values) -> result or None, the fast path of the "
              "F.* wrapper of function name; it remembers its last hit per "
              "mode until forget_call_sites().",
    .tp_traverse = (traverseproc)call_site_traverse,
    .tp_clear = (inquiry)call_site_clear,
    .tp_new = call_site_new,
};

static PyObject *forget_call_sites(PyObject *self, PyObject *unused)
{
    site_epoch++;
    Py_RETURN_NONE;
}

/* -- module ---------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"bind_array", bind_array, METH_VARARGS,
     "bind_array(SyncedArray, no_heads): read the slot offsets of the array class; "
     "no_heads is what a cleared array's heads become."},
    {"bind_nodes", bind_nodes, METH_VARARGS,
     "bind_nodes(VarNode, Variable, release_uncommon): read the slot offsets of the node "
     "classes; release_uncommon(node) releases what release_handle does not."},
    {"bind_function", bind_function, METH_VARARGS,
     "bind_function(Function, STATE): read the slot offsets of Function and of the core's "
     "state."},
    {"bind_dispatch", bind_dispatch, METH_VARARGS,
     "bind_dispatch(NdArray, imperative_runners, graph_builders, REGISTRY): the tables the "
     "F.* wrappers' fast paths read (nnabla._dispatch)."},
    {"forget_call_sites", forget_call_sites, METH_NOARGS,
     "forget_call_sites(): every CallSite's remembered hits become stale (the tables they "
     "were read from were emptied)."},
    {"track", track_node, METH_O,
     "track(node): a loose VarNode becomes tracked by the garbage collector."},
    {"track_graph", track_graph, METH_O,
     "track_graph(obj): obj (a Function or VarNode) and everything loose downstream of it "
     "become tracked by the garbage collector (before a user object may close a cycle)."},
    {"add_consumer", (PyCFunction)(void (*)(void))add_consumer_py, METH_FASTCALL,
     "add_consumer(node, ref): record the weak reference ref of a new consumer in node.refs: "
     "the first live one is held alone, a second makes a list, and a list drops its dead "
     "references whenever it reaches a power of two from 16."},
    {"account", account_py, METH_O,
     "account(delta): add delta (an int, negative to release) to the bytes in use; the "
     "peak follows."},
    {"memory_stats", memory_stats, METH_NOARGS,
     "memory_stats() -> {'in_use': int, 'peak': int}: bytes held by array heads, and the "
     "peak since the last reset_peak_memory()."},
    {"reset_peak_memory", reset_peak_memory, METH_NOARGS,
     "reset_peak_memory(): the peak becomes the bytes in use now."},
    {"holding", (PyCFunction)(void (*)(void))holding, METH_FASTCALL,
     "holding(shape, key, arr, nbytes) -> SyncedArray: a new array whose only head is arr "
     "under key ((family, dtype)), nbytes big."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef release_array_bytes_def = {
    "__del__", release_array_bytes, METH_NOARGS,
    "SyncedArray.__del__: the bytes its heads held leave the memory counters."};
static PyMethodDef put_array_def = {
    "put", (PyCFunction)(void (*)(void))put_array, METH_FASTCALL,
    "put(key, arr, nbytes): install arr (a kernel's output) as the only head under key "
    "((family, arr.dtype)), nbytes big: set() with both known (plans)."};
static PyMethodDef clear_array_def = {
    "clear", clear_array, METH_NOARGS,
    "Release the memory; the contents become undefined (read as zeros)."};
static PyMethodDef release_handle_def = {
    "__del__", release_handle, METH_NOARGS,
    "Variable.__del__: the last handle of an auto-forward intermediate no backward reads "
    "releases its data."};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "nnabla._native_graph",
    "The auto-forward graph builder and SyncedArray's kernel-output constructor, in C.", -1,
    methods,
};

/* Add ``obj`` (a new reference, or NULL after an error) to module ``m``; 0 or -1. */
static int add_object(PyObject *m, const char *name, PyObject *obj)
{
    if (obj == NULL || PyModule_AddObject(m, name, obj) < 0) {
        Py_XDECREF(obj);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__native_graph(void)
{
    if (PyType_Ready(&UnaryRunnerType) < 0 || PyType_Ready(&BuilderType) < 0
            || PyType_Ready(&CallSiteType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    G.empty_name = PyUnicode_FromString("");
    G.one = PyLong_FromLong(1);
    G.str_dtype = PyUnicode_InternFromString("dtype");
    G.str_shape = PyUnicode_InternFromString("shape");
    G.zero = PyLong_FromLong(0);
    G.str_get = PyUnicode_InternFromString("get");
    G.str_backend = PyUnicode_InternFromString("backend");
    G.str_device_id = PyUnicode_InternFromString("device_id");
    G.str_version = PyUnicode_InternFromString("version");
    if (G.empty_name == NULL || G.one == NULL
            || G.str_dtype == NULL || G.str_shape == NULL || G.zero == NULL || G.str_get == NULL
            || G.str_backend == NULL || G.str_device_id == NULL || G.str_version == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    /* the classes' methods as method descriptors (bound like a Python def), and the types */
    if (add_object(m, "release_array_bytes",
                   PyDescr_NewMethod(&PyBaseObject_Type, &release_array_bytes_def)) < 0
            || add_object(m, "clear_array",
                          PyDescr_NewMethod(&PyBaseObject_Type, &clear_array_def)) < 0
            || add_object(m, "put_array",
                          PyDescr_NewMethod(&PyBaseObject_Type, &put_array_def)) < 0
            || add_object(m, "release_handle",
                          PyDescr_NewMethod(&PyBaseObject_Type, &release_handle_def)) < 0
            || PyModule_AddIntConstant(m, "MAX_UFUNC_OPERANDS", MAX_UFUNC_OPERANDS) < 0
            || add_object(m, "UnaryRunner", Py_NewRef((PyObject *)&UnaryRunnerType)) < 0
            || add_object(m, "Builder", Py_NewRef((PyObject *)&BuilderType)) < 0
            || add_object(m, "CallSite", Py_NewRef((PyObject *)&CallSiteType)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
