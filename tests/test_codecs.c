#include <criterion/criterion.h>
#include "codec.h"
Test(codecs, registry_has_ten) { cr_assert_eq(codec_count(), 10); }
