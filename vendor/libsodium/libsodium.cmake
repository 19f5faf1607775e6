# libsodium, compiled by our own CMake as the static, position-independent library
# `aeron_py_sodium` (included from the top-level CMakeLists.txt). Its source is a pinned,
# fetched dependency (vendor/libsodium/README.md): LIBSODIUM_SOURCE_DIR (cache var or env)
# names an existing release tree, else vendor/libsodium/fetch.py prints one (the sdist's
# bundled copy, or the pinned crate's tarball unpacked in the git-ignored cache).
#
# C only: every src/libsodium/**/*.c, with the configuration libsodium's own build.zig uses
# on Linux, no assembly (no .S files, no HAVE_AMD64_ASM, HAVE_AVX_ASM or HAVE_RDRAND); on
# x86-64 the SIMD variants are compiled and picked at run time by CPU detection (below),
# elsewhere they compile to empty files and the reference C code runs.
# -fvisibility=hidden with SODIUM_STATIC: no libsodium symbol leaves our extension, so
# another libsodium in the same Python process (PyNaCl's, a system one) never clashes.

# The pinned release: version.h's values when the tree has no configure.ac (the sdist's
# copy carries src/libsodium and LICENSE only). A tree with configure.ac says its own.
set(AERON_PY_SODIUM_VERSION "1.0.22")
set(AERON_PY_SODIUM_LIBRARY_VERSION_MAJOR 26)
set(AERON_PY_SODIUM_LIBRARY_VERSION_MINOR 4)

if(NOT LIBSODIUM_SOURCE_DIR AND DEFINED ENV{LIBSODIUM_SOURCE_DIR})
  set(LIBSODIUM_SOURCE_DIR "$ENV{LIBSODIUM_SOURCE_DIR}")
endif()
if(NOT LIBSODIUM_SOURCE_DIR)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/fetch.py"
    OUTPUT_VARIABLE LIBSODIUM_SOURCE_DIR
    ERROR_VARIABLE _sodium_fetch_error
    RESULT_VARIABLE _sodium_fetch_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _sodium_fetch_rc EQUAL 0)
    message(FATAL_ERROR "${_sodium_fetch_error}")
  endif()
endif()
set(_sodium "${LIBSODIUM_SOURCE_DIR}/src/libsodium")
foreach(_required include/sodium.h include/sodium/version.h.in sodium/core.c)
  if(NOT EXISTS "${_sodium}/${_required}")
    message(FATAL_ERROR "LIBSODIUM_SOURCE_DIR=${LIBSODIUM_SOURCE_DIR} has no src/libsodium/${_required}: "
                        "it must be a libsodium release tree")
  endif()
endforeach()

if(EXISTS "${LIBSODIUM_SOURCE_DIR}/configure.ac")
  file(READ "${LIBSODIUM_SOURCE_DIR}/configure.ac" _configure)
  string(REGEX MATCH "AC_INIT\\(\\[libsodium\\],[ ]*\\[([^]]+)\\]" _ "${_configure}")
  set(AERON_PY_SODIUM_VERSION "${CMAKE_MATCH_1}")
  string(REGEX MATCH "\nSODIUM_LIBRARY_VERSION_MAJOR=([0-9]+)" _ "${_configure}")
  set(AERON_PY_SODIUM_LIBRARY_VERSION_MAJOR "${CMAKE_MATCH_1}")
  string(REGEX MATCH "\nSODIUM_LIBRARY_VERSION_MINOR=([0-9]+)" _ "${_configure}")
  set(AERON_PY_SODIUM_LIBRARY_VERSION_MINOR "${CMAKE_MATCH_1}")
  if(NOT AERON_PY_SODIUM_VERSION OR NOT AERON_PY_SODIUM_LIBRARY_VERSION_MAJOR OR
     NOT AERON_PY_SODIUM_LIBRARY_VERSION_MINOR)
    message(FATAL_ERROR "${LIBSODIUM_SOURCE_DIR}/configure.ac does not say libsodium's version "
                        "(AC_INIT, SODIUM_LIBRARY_VERSION_MAJOR/MINOR)")
  endif()
endif()
message(STATUS "aeron_py: libsodium ${AERON_PY_SODIUM_VERSION} source at ${LIBSODIUM_SOURCE_DIR}")

# The public headers as libsodium installs them: src/libsodium/include's sodium.h and
# sodium/*.h (not private/) copied into the build tree, with sodium/version.h generated from
# version.h.in as libsodium's configure writes it (not the minimal build). The copy is what
# consumers include: version.h includes "export.h" from its own folder, so it must sit
# beside the other headers (and putting src/libsodium/include/sodium itself on their
# include path would expose libsodium's plain header names: core.h, utils.h, ...).
set(_sodium_include "${CMAKE_CURRENT_BINARY_DIR}/libsodium/include")
file(COPY "${_sodium}/include/" DESTINATION "${_sodium_include}"
     PATTERN "version.h.in" EXCLUDE PATTERN "private" EXCLUDE PATTERN "Makefile.*" EXCLUDE)
set(VERSION "${AERON_PY_SODIUM_VERSION}")
set(SODIUM_LIBRARY_VERSION_MAJOR "${AERON_PY_SODIUM_LIBRARY_VERSION_MAJOR}")
set(SODIUM_LIBRARY_VERSION_MINOR "${AERON_PY_SODIUM_LIBRARY_VERSION_MINOR}")
set(SODIUM_LIBRARY_MINIMAL_DEF "")
configure_file("${_sodium}/include/sodium/version.h.in" "${_sodium_include}/sodium/version.h" @ONLY)
unset(VERSION)

file(GLOB_RECURSE AERON_PY_SODIUM_SOURCES CONFIGURE_DEPENDS "${_sodium}/*.c")
add_library(aeron_py_sodium STATIC ${AERON_PY_SODIUM_SOURCES})
# A sanitizer build (AERON_PY_SANITIZE) instruments libsodium too, except Argon2's block
# filling (crypto_pwhash, which aeron_py never calls; sodium_init only picks its variant):
# under ASan+UBSan its AVX2 and AVX-512 variants alone took 1.5 and 2 minutes to compile.
if(AERON_PY_SANITIZE)
  file(GLOB _sodium_argon2_fill "${_sodium}/crypto_pwhash/argon2/argon2-fill-block-*.c")
  set_source_files_properties(${_sodium_argon2_fill} PROPERTIES COMPILE_OPTIONS "-fno-sanitize=all")
endif()
set_target_properties(aeron_py_sodium PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  C_VISIBILITY_PRESET hidden        # -fvisibility=hidden
  C_STANDARD 11                     # _Thread_local
  C_STANDARD_REQUIRED ON)
# the library's own sources include "private/common.h", "core.h", "version.h" ... (its folder first)
target_include_directories(aeron_py_sodium
  PUBLIC "${_sodium_include}"
  PRIVATE "${_sodium}/include/sodium" "${_sodium_include}/sodium")
# SODIUM_STATIC is PUBLIC: it empties SODIUM_EXPORT, which would otherwise mark every
# declaration visibility("default") and override -fvisibility=hidden.
target_compile_definitions(aeron_py_sodium PUBLIC SODIUM_STATIC=1)
target_compile_definitions(aeron_py_sodium PRIVATE
  CONFIGURED=1 _GNU_SOURCE=1 TLS=_Thread_local
  HAVE_INTTYPES_H=1 HAVE_STDINT_H=1 HAVE_SYS_MMAN_H=1 HAVE_SYS_PARAM_H=1 HAVE_SYS_RANDOM_H=1 HAVE_SYS_AUXV_H=1
  HAVE_PTHREAD=1 HAVE_PTHREAD_PRIO_INHERIT=1 HAVE_MMAP=1 HAVE_MLOCK=1 HAVE_MADVISE=1 HAVE_MPROTECT=1
  HAVE_POSIX_MEMALIGN=1 HAVE_SYSCONF=1 HAVE_GETPID=1 HAVE_RAISE=1 HAVE_NANOSLEEP=1 HAVE_CLOCK_GETTIME=1
  HAVE_GETRANDOM=1 HAVE_EXPLICIT_BZERO=1  # glibc >= 2.25 (the wheels target 2.28)
  HAVE_WEAK_SYMBOLS=1 HAVE_ATOMIC_OPS=1 HAVE_C11_MEMORY_FENCES=1 HAVE_GCC_MEMORY_FENCES=1
  HAVE_INLINE_ASM=1)                 # compiler barriers only (constant-time code, memzero)
if(CMAKE_C_BYTE_ORDER STREQUAL "BIG_ENDIAN")
  target_compile_definitions(aeron_py_sodium PRIVATE NATIVE_BIG_ENDIAN=1)
else()
  target_compile_definitions(aeron_py_sodium PRIVATE NATIVE_LITTLE_ENDIAN=1)
endif()
if(CMAKE_SIZEOF_VOID_P EQUAL 8)
  target_compile_definitions(aeron_py_sodium PRIVATE HAVE_TI_MODE=1)  # 128-bit integers: field arithmetic
endif()
# build.zig's flags: the C code relies on wrapping signed arithmetic and on type punning.
# -w: libsodium's warnings are not ours to fix (and the SIMD files warn about being empty).
target_compile_options(aeron_py_sodium PRIVATE -fno-strict-aliasing -fno-strict-overflow -fwrapv -w)
# x86-64: libsodium's SIMD implementations (SSE2/SSSE3/SSE4.1/AVX2/AVX-512 for ChaCha20,
# Poly1305, BLAKE2b, Argon2, X25519's field arithmetic is portable) are compiled with per-
# function target attributes inside libsodium, not global -m flags, and picked at run time by
# its CPU detection (CPUID): one wheel runs on every x86-64 and uses what the CPU has. No
# assembly files (HAVE_AMD64_ASM stays off).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  target_compile_definitions(aeron_py_sodium PRIVATE
    HAVE_CPUID=1 HAVE_XGETBV_ASM=1 HAVE_MMINTRIN_H=1 HAVE_EMMINTRIN_H=1 HAVE_PMMINTRIN_H=1 HAVE_TMMINTRIN_H=1
    HAVE_SMMINTRIN_H=1 HAVE_AVXINTRIN_H=1 HAVE_AVX2INTRIN_H=1 HAVE_AVX512FINTRIN_H=1 HAVE_WMMINTRIN_H=1)
endif()
