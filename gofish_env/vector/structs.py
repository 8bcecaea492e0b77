"""How the kernels hold a batch's arrays: one numba StructRef per group of arrays, whose
arrays carry no reference count of their own.

Every time compiled code takes an array out of a struct or a tuple, or hands one to a
function, numba counts a reference to it (an atomic add and subtract), unless it can prove
the pair useless, which it cannot across branches and loops. In these kernels that counting
cost more than the rules themselves. So the struct the kernels get holds *borrowed* views of
the arrays: the same data, with no memory-manager record to count. The struct itself is
counted the same way each time it is handed to a function, so the kernels get it borrowed
too (``BorrowedStruct``: the address of its fields). The Python object that made the
struct (``VectorGame``, ``CompiledCPUs``) keeps the NumPy arrays and the struct alive as
long as it lives.
"""

from __future__ import annotations

from collections import namedtuple

import numba
from numba.core import cgutils, imputils, types
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref
from numba.experimental.jitclass.base import imp_dtor
from numba.extending import (
    NativeValue,
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    models,
    register_model,
    unbox,
)

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)


def struct_types(name: str, fields: tuple[str, ...], module: str):
    """(the named tuple Python code uses, the StructRef type class the kernels get) with
    these fields. ``module`` must bind the type class under ``name + "StructType"``: numba's
    cache finds it there by name (a kernel is otherwise compiled again at every start)."""

    class StructType(types.StructRef):
        def preprocess_fields(self, members):
            return tuple((field, types.unliteral(kind)) for field, kind in members)

    StructType.__name__ = StructType.__qualname__ = f"{name}StructType"
    StructType.__module__ = module
    structref.register(StructType)
    proxy = type(f"{name}Struct", (structref.StructRefProxy,), {"__module__": module})
    structref.define_boxing(StructType, proxy)
    return namedtuple(name, fields, module=module), StructType


def borrowing_builder(struct_class):
    """An intrinsic ``build(values)``: a new ``struct_class`` struct whose fields are the
    named tuple ``values``' fields, arrays borrowed (their memory-manager pointer null, so
    numba counts no references to them: the caller keeps them alive)."""

    @intrinsic
    def build(typingctx, values):
        members = zip(values.fields, values.types, strict=True)
        fields = [(name, types.unliteral(kind)) for name, kind in members]
        instance = struct_class(fields)

        def codegen(context, builder, signature, args):
            data_type = context.data_model_manager[instance.get_data_type()].get_value_type()
            meminfo = context.nrt.meminfo_alloc_dtor(
                builder,
                context.get_constant(types.uintp, context.get_abi_sizeof(data_type)),
                imp_dtor(context, builder.module, instance),
            )
            pointer = builder.bitcast(
                context.nrt.meminfo_data(builder, meminfo), data_type.as_pointer()
            )
            builder.store(cgutils.get_null_value(data_type), pointer)
            data = cgutils.create_struct_proxy(instance.get_data_type())(
                context, builder, ref=pointer
            )
            for index, (name, kind) in enumerate(fields):
                value = builder.extract_value(args[0], index)
                if isinstance(kind, types.Array):
                    array = context.make_array(kind)(context, builder, value=value)
                    array.meminfo = cgutils.get_null_value(array.meminfo.type)
                    value = array._getvalue()
                setattr(data, name, value)
            handle = context.make_helper(builder, instance)
            handle.meminfo = meminfo
            return handle._getvalue()

        return instance(values), codegen

    return build


class BorrowedStructType(types.Type):
    """A struct (``struct_type``, a StructRef type) as the kernels get it: the address of
    its fields, with no memory-manager record. A StructRef is counted (an atomic add and
    subtract) by every function it is handed to, and the rules hand the state to a
    function at every step of an ask: in random play that counting took half the time."""

    def __init__(self, struct_type):
        self.struct_type = struct_type
        super().__init__(name=f"Borrowed({struct_type.name})")


@register_model(BorrowedStructType)
class _BorrowedStructModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        fields = dmm.lookup(fe_type.struct_type.get_data_type()).get_value_type()
        super().__init__(dmm, fe_type, fields.as_pointer())


@infer_getattr
class _BorrowedStructAttribute(AttributeTemplate):
    key = BorrowedStructType

    def generic_resolve(self, typ, attr):
        return typ.struct_type.field_dict.get(attr)


@lower_getattr_generic(BorrowedStructType)
def _borrowed_struct_getattr(context, builder, typ, value, attr):
    data_type = typ.struct_type.get_data_type()
    fields = cgutils.create_struct_proxy(data_type)(context, builder, ref=value)
    kind = typ.struct_type.field_dict[attr]
    return imputils.impl_ret_borrowed(context, builder, kind, getattr(fields, attr))


@unbox(BorrowedStructType)
def _unbox_borrowed_struct(typ, obj, c):
    address = c.pyapi.object_getattr_string(obj, "address")
    pointer = c.pyapi.long_as_voidptr(address)
    c.pyapi.decref(address)
    value_type = c.context.data_model_manager[typ].get_value_type()
    return NativeValue(c.builder.bitcast(pointer, value_type))


class BorrowedStruct:
    """What Python hands the kernels for a struct: its fields' address and the numba
    type that reads them (``BorrowedStructType``). It keeps the struct and ``arrays``, the
    named tuple of arrays the struct borrows (``borrowing_builder``), alive while it lives:
    the struct itself counts no reference to them."""

    __slots__ = ("struct", "arrays", "address", "_numba_type_")

    def __init__(self, struct: structref.StructRefProxy, arrays):
        self.struct = struct
        self.arrays = arrays
        self.address = struct._meminfo.data
        self._numba_type_ = BorrowedStructType(struct._type)


@intrinsic
def borrow(typingctx, array):
    """The same array with no memory-manager record (numba counts no references to it):
    for work arrays a kernel allocates once and hands to helpers thousands of times. The
    caller keeps the original alive while the borrowed one is used."""

    def codegen(context, builder, signature, args):
        borrowed = context.make_array(array)(context, builder, value=args[0])
        borrowed.meminfo = cgutils.get_null_value(borrowed.meminfo.type)
        return borrowed._getvalue()

    return array(array), codegen


@numba.njit(cache=True)
def keep_alive(value):
    """Nothing: a use of ``value`` that keeps it (and arrays borrowed from it) alive until
    this call, since numba frees a variable after its last use."""
    return None


class CompiledConstantsType(types.Type):
    """A named tuple of numbers compiled into the kernels as constants: the type carries
    the values, so the kernels are compiled once for each set of them (about a minute,
    then kept in numba's cache), and LLVM sees every loop's length and every rule's flag:
    loops over the ranks and seats run a known number of times, and the code of rules not
    in play is gone."""

    def __init__(self, values: tuple[tuple[str, object], ...]):
        self.values = dict(values)
        self.field_types = {name: types.unliteral(numba.typeof(v)) for name, v in values}
        super().__init__(name=f"CompiledConstants{values}")


register_model(CompiledConstantsType)(models.OpaqueModel)


@infer_getattr
class _CompiledConstantsAttribute(AttributeTemplate):
    key = CompiledConstantsType

    def generic_resolve(self, typ, attr):
        return typ.field_types.get(attr)


@lower_getattr_generic(CompiledConstantsType)
def _compiled_constant(context, builder, typ, value, attr):
    return context.get_constant(typ.field_types[attr], typ.values[attr])


@unbox(CompiledConstantsType)
def _unbox_compiled_constants(typ, obj, c):
    return NativeValue(c.context.get_constant_null(types.voidptr))


class CompiledConstants:
    """A named tuple of numbers as the kernels get it when they are compiled for it
    (``CompiledConstantsType``); Python reads its fields as on the tuple."""

    def __init__(self, values):
        self.values = values
        pairs = tuple(zip(values._fields, values, strict=True))
        self._numba_type_ = CompiledConstantsType(pairs)

    def __getattr__(self, name):
        if name.startswith("_") or name == "values":  # not set yet (copy, pickle)
            raise AttributeError(name)
        return getattr(self.values, name)


class NotCopyable:
    """Refuses pickling and copying with a ``TypeError`` that says what to do instead: the
    batch lives in compiled structures (borrowed views, StructRefs) that neither pickle nor
    copy. ``_copy_advice`` is the class's advice."""

    _copy_advice = ""

    def _refuse_copy(self, what: str):
        raise TypeError(
            f"{type(self).__name__} cannot be {what}: its games live in compiled (numba) "
            f"structures that are not copied. {self._copy_advice}"
        )

    def __reduce_ex__(self, protocol):
        self._refuse_copy("pickled or copied")

    def __reduce__(self):
        self._refuse_copy("pickled or copied")

    def __copy__(self):
        self._refuse_copy("copied")

    def __deepcopy__(self, memo):
        self._refuse_copy("deep-copied")
