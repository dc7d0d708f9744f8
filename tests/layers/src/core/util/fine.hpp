// Allowed: includes only its own layer and the standard library.
#pragma once
#include <string>
