// Credentials for an Archive that authenticates (aeron_archive_context_set_credentials_supplier).
// The C client asks for them on the connecting thread, inside aeron_archive_connect (GIL
// released, the connection's state not yet shared with any other thread): the encoded
// credentials are ours, kept by `Credentials`; a challenge is answered by the Python callable,
// with the GIL taken for it. What the callable raises is kept and re-raised after the connect;
// the Archive then gets an empty answer, which it rejects. No C++ exception crosses the C frames.
#include "archive_state.hpp"

namespace aeron_py::archive {

namespace {

aeron_archive_encoded_credentials_t *point_at(aeron_archive_encoded_credentials_t &out, const std::string &data) {
    out.data = data.data();  // never null, even when empty
    out.length = static_cast<uint32_t>(data.size());
    return &out;
}

aeron_archive_encoded_credentials_t *supply(void *clientd) {
    auto *credentials = static_cast<Credentials *>(clientd);
    return point_at(credentials->request, credentials->encoded);
}

aeron_archive_encoded_credentials_t *answer(aeron_archive_encoded_credentials_t *challenge, void *clientd) {
    auto *credentials = static_cast<Credentials *>(clientd);
    credentials->answer.clear();
    HeldGil gil;  // outside the handlers below: taking it may park this thread at exit (gil.hpp)
    try {
        if (!credentials->on_challenge.is_none() && credentials->raised == nullptr) {
            py::bytes text(challenge->data != nullptr ? challenge->data : "", challenge->length);
            py::object reply = credentials->on_challenge(text);
            if (!py::isinstance<py::bytes>(reply))
                throw py::type_error("on_challenge must return bytes, got " +
                                     std::string(py::str(py::type::of(reply).attr("__name__"))));
            credentials->answer = reply.cast<std::string>();
        }
    } catch (py::error_already_set &error) {
        try {
            credentials->raised = std::make_unique<py::error_already_set>(std::move(error));
        } catch (...) {  // out of memory: the Archive's rejection is what the connect reports
        }
    } catch (const std::exception &error) {  // type_error above, or out of memory
        PyErr_SetString(PyExc_TypeError, error.what());
        try {
            credentials->raised = std::make_unique<py::error_already_set>();
        } catch (...) {
            PyErr_Clear();
        }
    }
    return point_at(credentials->response, credentials->answer);
}

void keep(aeron_archive_encoded_credentials_t *, void *) {}  // both answers are owned by Credentials

}  // namespace

void set_credentials(aeron_archive_context_t *ctx, Credentials &credentials) {
    if (credentials.encoded.size() > INT32_MAX) throw py::value_error("credentials longer than 2 GiB");
    if (aeron_archive_context_set_credentials_supplier(ctx, supply, answer, keep, &credentials) < 0)
        throw_aeron_error("aeron_archive_context_set_credentials_supplier");
}

}  // namespace aeron_py::archive
