// Python ints for the results of the hot calls (offer's new stream position), recycled.
//
// A position above 256 is a new int object per offer: an allocation, a free and two
// thread-state look-ups, a quarter of the cost of an offer. The int handed out by the
// previous call is usually dropped at once (`if pub.offer(m) > 0:`); when only this cache
// still references it, nobody can observe it, so its digits are rewritten in place for the
// next value, as CPython itself reuses objects it alone holds. An int someone kept (refcount
// above 1) is never touched again: the cache lets go of it and makes a new one. Two carriers,
// so `pos = pub.offer(m)` in a loop (which holds the previous result while asking for the
// next) recycles too. Carriers are made with room for three 30-bit digits: every int64.
//
// Only where the int layout was checked (CPython 3.11 to 3.13 and 3.13t, 30-bit digits), and
// only while the tricks are on (tricks.hpp); elsewhere make() is PyLong_FromLongLong. "Only this
// cache" is tricks::sole_reference, which free-threaded also asks that the int be this thread's:
// with two threads taking turns on one publication, each mostly gets a new int.
#pragma once

#include <Python.h>

#include <cstdint>

#include "tricks.hpp"

namespace aeron_py {

#if AERON_PY_CPYTHON_RECYCLING && PYLONG_BITS_IN_DIGIT == 30
#define AERON_PY_RECYCLED_INTS 1
#endif

class RecycledInts {
public:
    // A new reference to an int of `value`, or nullptr with an error set.
    PyObject *make(int64_t value) {
#ifdef AERON_PY_RECYCLED_INTS
        if (value > 256 && tricks::recycling_on()) {  // -5..256 are CPython's shared small ints
            for (PyObject *carrier : carriers_) {
                if (carrier != nullptr && tricks::sole_reference(carrier)) {
                    rewrite(carrier, static_cast<uint64_t>(value));
                    return Py_NewRef(carrier);
                }
            }
            PyObject *fresh = PyLong_FromUnsignedLongLong(uint64_t{1} << 62);  // three digits of room
            if (fresh == nullptr) return nullptr;
            rewrite(fresh, static_cast<uint64_t>(value));
            PyObject *&slot = carriers_[0] == nullptr ? carriers_[0] : carriers_[1];
            if (slot != nullptr) {  // both held by somebody: the older one is theirs alone now
                Py_XSETREF(carriers_[0], carriers_[1]);
                carriers_[1] = Py_NewRef(fresh);
            } else {
                slot = Py_NewRef(fresh);
            }
            return fresh;
        }
#endif
        return PyLong_FromLongLong(value);
    }

private:
#ifdef AERON_PY_RECYCLED_INTS
    // `value` (257 .. 2^63-1) into a carrier nobody else references.
    static void rewrite(PyObject *carrier, uint64_t value) {
        auto *number = reinterpret_cast<PyLongObject *>(carrier);
        uintptr_t digits = 0;
        do {
#if PY_VERSION_HEX >= 0x030C0000
            number->long_value.ob_digit[digits++] = static_cast<digit>(value & PyLong_MASK);
#else
            number->ob_digit[digits++] = static_cast<digit>(value & PyLong_MASK);
#endif
            value >>= PyLong_SHIFT;
        } while (value != 0);
#if PY_VERSION_HEX >= 0x030C0000
        number->long_value.lv_tag = digits << _PyLong_NON_SIZE_BITS;  // sign bits 0: positive
#else
        Py_SET_SIZE(carrier, static_cast<Py_ssize_t>(digits));
#endif
    }
#endif
    PyObject *carriers_[2] = {nullptr, nullptr};  // owned; never freed (two small ints per process)
};

}  // namespace aeron_py
