# Loaded by test/integration/fuzz.test.ts through SCHEMATHESIS_HOOKS.
#
# schemathesis 4.32.5, coverage phase: an optional header whose `pattern` needs a character
# other than A-Z, a-z, 0-9 (`Service-User` `^eu_`, `X-Space-Id` `^spc_...`) gets no positive
# value, and its first negative one (`0`) is then sent in cases labelled positive, which the
# positive_data_acceptance check judges as schema-valid requests. This takes such a header out
# of a positive case, as the generator itself does with an optional header it has no value
# for. Negative cases, and headers whose values fit their schema, are left as generated.
import schemathesis
from schemathesis.generation import GenerationMode


@schemathesis.hook
def map_case(context, case):
    if case.meta is None or case.meta.generation.mode is not GenerationMode.POSITIVE or not case.headers:
        return case
    for parameter in case.operation.headers:
        value = case.headers.get(parameter.name)
        if value is not None and not parameter.is_required and not parameter.get_validator().is_valid(value):
            del case.headers[parameter.name]
    return case
