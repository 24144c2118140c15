"""Every Case of every family, gathered from the ``cases_*`` modules (in name order)."""
from . import (cases_activation, cases_arithmetic, cases_array, cases_array_extra,
               cases_geometry, cases_logical, cases_loss, cases_math, cases_misc,
               cases_neural_network, cases_nn_advanced, cases_normalization,
               cases_normalization_extra, cases_quantization, cases_recurrent, cases_reduction,
               cases_signal, cases_stochastic, cases_validation)

FAMILIES = (cases_activation, cases_arithmetic, cases_array, cases_array_extra, cases_geometry,
            cases_logical, cases_loss, cases_math, cases_misc, cases_neural_network,
            cases_nn_advanced, cases_normalization, cases_normalization_extra,
            cases_quantization, cases_recurrent, cases_reduction, cases_signal,
            cases_stochastic, cases_validation)
ALL_CASES = [case for family in FAMILIES for case in family.CASES]
