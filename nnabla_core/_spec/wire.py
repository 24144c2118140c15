"""Facts of nnabla's NNP wire format that the function spec does not hold.

:mod:`nnabla.utils._nnp_schema` builds the NNP schema (``nnabla.proto``) from the function
spec (:data:`nnabla._spec.SPECS`) plus the tables below, all recorded from nnabla 1.39.0
(``functions.yaml`` and ``solvers.yaml``, the tables nnabla generates its schema from):

- ``Function.<snake>_param`` has the number ``FUNCTION_FIELDS[name]``: nnabla numbers a
  function 1001 + its position in its function table. Functions without arguments have no
  parameter message; their numbers are reserved, unused.
- An argument's field number is 1 + its position in the spec's argument list. The spec
  lists every function's arguments in nnabla's order, so no exception is recorded.
- An argument's proto type follows from its kind (``KIND_TYPES``, with ``?`` dropped);
  ``ARG_TYPES`` lists the arguments whose type in nnabla's schema is another one.
- ``Solver.<snake>_param`` is named and numbered by ``SOLVER_FIELDS`` (100 + the solver's
  position in nnabla's solver table); its message holds the solver's arguments
  (``nnabla._spec.solvers.SPECS``: bool defaults are bool fields, the others float).

``tests/core/test_nnabla_pb2.py`` checks the schema built from these against nnabla
1.39.0's, field for field (``tests/data/nnp_schema_1.39.json``).
"""
from __future__ import annotations

FUNCTION_FIELDS = {
    # Neural Network Layer
    "Affine": 1001, "RNN": 1002, "LSTM": 1003, "GRU": 1004, "Convolution": 1005,
    "FusedConvolution": 1006, "DepthwiseConvolution": 1007, "Deconvolution": 1008,
    "DepthwiseDeconvolution": 1009, "DeformableConvolution": 1010,
    "AdaptiveSeparableConvolution": 1011, "MaxPooling": 1012, "AveragePooling": 1013,
    "GlobalAveragePooling": 1014, "SumPooling": 1015, "Unpooling": 1016, "Embed": 1017,
    "RoiAlign": 1018,
    # Neural Network Activation Functions
    "Sigmoid": 1019, "Swish": 1020, "Tanh": 1021, "ReLU": 1022, "LeakyReLU": 1023, "Softmax": 1024,
    "LogSoftmax": 1025, "ELU": 1026, "SELU": 1027, "CReLU": 1028, "CELU": 1029, "PReLU": 1030,
    "GELU": 1031, "Mish": 1032, "ReLU6": 1033, "HardSigmoid": 1034, "HardTanh": 1035,
    "LogSigmoid": 1036, "SoftPlus": 1037, "SoftSign": 1038, "TanhShrink": 1039, "Sinc": 1040,
    # Normalization
    "FusedBatchNormalization": 1041, "BatchNormalization": 1042, "GroupNormalization": 1043,
    "InstanceNormalization": 1044, "LayerNormalization": 1045, "NormNormalization": 1046,
    "SyncBatchNormalization": 1047, "TensorNormalization": 1048, "WeightNormalization": 1049,
    "WeightStandardization": 1050, "SpectralNorm": 1051, "MeanSubtraction": 1052,
    "ClipGradByValue": 1053, "ClipGradByNorm": 1054,
    # Reduction
    "Sum": 1055, "CumSum": 1056, "Mean": 1057, "Max": 1058, "Min": 1059, "Norm": 1060,
    "Prod": 1061, "CumProd": 1062, "ReduceSum": 1063, "ReduceMean": 1064,
    # Arithmetic
    "Add2": 1065, "AddN": 1066, "BcAdd2": 1067, "Sub2": 1068, "Mul2": 1069, "MulN": 1070,
    "Div2": 1071, "Pow2": 1072, "AddScalar": 1073, "MulScalar": 1074, "PowScalar": 1075,
    "RSubScalar": 1076, "RDivScalar": 1077, "RPowScalar": 1078,
    # Logical
    "Sign": 1079, "Minimum2": 1080, "Maximum2": 1081, "MinimumScalar": 1082, "MaximumScalar": 1083,
    "LogicalAnd": 1084, "LogicalOr": 1085, "LogicalXor": 1086, "Equal": 1087, "NotEqual": 1088,
    "GreaterEqual": 1089, "Greater": 1090, "LessEqual": 1091, "Less": 1092, "SearchSorted": 1093,
    "LogicalAndScalar": 1094, "LogicalOrScalar": 1095, "LogicalXorScalar": 1096,
    "EqualScalar": 1097, "NotEqualScalar": 1098, "GreaterEqualScalar": 1099, "GreaterScalar": 1100,
    "LessEqualScalar": 1101, "LessScalar": 1102, "LogicalNot": 1103, "IsNaN": 1104, "IsInf": 1105,
    "ResetNaN": 1106, "ResetInf": 1107, "Where": 1108,
    # Math
    "Constant": 1109, "Arange": 1110, "Linspace": 1111, "Abs": 1112, "Exp": 1113, "Log": 1114,
    "Identity": 1115, "BatchMatmul": 1116, "Round": 1117, "Ceil": 1118, "Floor": 1119, "Sin": 1120,
    "Cos": 1121, "Tan": 1122, "Sinh": 1123, "Cosh": 1124, "ASin": 1125, "ACos": 1126, "ATan": 1127,
    "ATan2": 1128, "ASinh": 1129, "ACosh": 1130, "ATanh": 1131, "Erf": 1132,
    # Array Manipulation
    "Concatenate": 1133, "Split": 1134, "Stack": 1135, "Slice": 1136, "Pad": 1137,
    "Transpose": 1138, "Broadcast": 1139, "BroadcastTo": 1140, "Tile": 1141, "OneHot": 1142,
    "Flip": 1143, "Shift": 1144, "Sort": 1145, "Reshape": 1146, "Shape": 1147, "MatrixDiag": 1148,
    "MatrixDiagPart": 1149, "Trilu": 1150, "Meshgrid": 1151, "BatchDet": 1152, "BatchInv": 1153,
    "BatchLogdet": 1154, "BatchCholesky": 1155, "Assign": 1156, "Gather": 1157, "GatherNd": 1158,
    "BoolGather": 1159, "ScatterNd": 1160, "ScatterAdd": 1161, "BoolScatter": 1162,
    "BoolFill": 1163, "PackPaddedSequence": 1164, "PadPackedSequence": 1165, "NonZero": 1166,
    # Signal Processing
    "Interpolate": 1167, "ONNXResize": 1168, "FFT": 1169, "IFFT": 1170, "STFT": 1171,
    "ISTFT": 1172,
    # Stochasticity
    "Dropout": 1173, "TopKData": 1174, "TopKGrad": 1175, "Rand": 1176, "Randint": 1177,
    "Randn": 1178, "RandBinomial": 1179, "RandBeta": 1180, "RandGamma": 1181, "RandomChoice": 1182,
    "RandomCrop": 1183, "RandomFlip": 1184, "RandomShift": 1185, "RandomErase": 1186,
    "ImageAugmentation": 1187,
    # Loss Functions
    "SigmoidCrossEntropy": 1188, "BinaryCrossEntropy": 1189, "SoftmaxCrossEntropy": 1190,
    "CategoricalCrossEntropy": 1191, "SquaredError": 1192, "AbsoluteError": 1193,
    "HuberLoss": 1194, "EpsilonInsensitiveLoss": 1195, "KLMultinomial": 1196,
    # Geometric Neural Network Layers
    "AffineGrid": 1197, "WarpByGrid": 1198, "WarpByFlow": 1199,
    # Quantization Neural Network Layers
    "BinarySigmoid": 1200, "BinaryTanh": 1201, "BinaryConnectAffine": 1202,
    "BinaryConnectConvolution": 1203, "BinaryWeightAffine": 1204, "BinaryWeightConvolution": 1205,
    "INQAffine": 1206, "INQConvolution": 1207, "FixedPointQuantize": 1208, "MinMaxQuantize": 1209,
    "Pow2Quantize": 1210, "Prune": 1211, "QuantizeLinear": 1212, "DequantizeLinear": 1213,
    # Validation
    "TopNError": 1214, "BinaryError": 1215, "ConfusionMatrix": 1216,
    # Unsupported, Special Use
    "VATNoise": 1217, "Unlink": 1218, "Sink": 1219, "NmsDetection2d": 1220,
    "ONNXNonMaxSuppression": 1221, "MaxPoolingBackward": 1222, "PatchCorrelation": 1223,
    "Unique": 1224, "EyeLike": 1225, "Mod2": 1226, "BitShift": 1227, "Einsum": 1228,
}

# The proto type of an argument of each kind (``nnabla._spec.args.KINDS``). "any" has none:
# such an argument needs an entry in ARG_TYPES.
KIND_TYPES = {
    "int": "int64",
    "float": "float",
    "bool": "bool",
    "str": "string",
    "ints": "Shape",
    "optints": "repeated int64",
    "floats": "repeated float",
}

# Arguments whose proto type is not KIND_TYPES[kind]: scalars nnabla stores as double, int
# lists it stores as a plain repeated field instead of a Shape, and the communicator.
ARG_TYPES = {
    "ELU": {"alpha": "double"},
    "SELU": {"scale": "double", "alpha": "double"},
    "CELU": {"alpha": "double"},
    "SoftPlus": {"beta": "double"},
    "FusedBatchNormalization": {"axes": "repeated int64"},
    "BatchNormalization": {"axes": "repeated int64"},
    "GroupNormalization": {"batch_axis": "repeated int64"},
    "InstanceNormalization": {"batch_axis": "repeated int64"},
    "LayerNormalization": {"batch_axis": "repeated int64"},
    "NormNormalization": {"axes": "repeated int64"},
    "SyncBatchNormalization": {"comm": "Communicator", "axes": "repeated int64"},
    "TensorNormalization": {"axes": "repeated int64"},
    "ClipGradByNorm": {"axes": "repeated int64"},
    "Sum": {"axes": "repeated int64"},
    "Mean": {"axes": "repeated int64"},
    "Max": {"axes": "repeated int64"},
    "Min": {"axes": "repeated int64"},
    "Norm": {"axes": "repeated int64"},
    "Prod": {"axes": "repeated int64"},
    "AddScalar": {"val": "double"},
    "MulScalar": {"val": "double"},
    "PowScalar": {"val": "double"},
    "RSubScalar": {"val": "double"},
    "RDivScalar": {"val": "double"},
    "RPowScalar": {"val": "double"},
    "MinimumScalar": {"val": "double"},
    "MaximumScalar": {"val": "double"},
    "EqualScalar": {"val": "double"},
    "NotEqualScalar": {"val": "double"},
    "GreaterEqualScalar": {"val": "double"},
    "GreaterScalar": {"val": "double"},
    "LessEqualScalar": {"val": "double"},
    "LessScalar": {"val": "double"},
    "ResetNaN": {"val": "double"},
    "ResetInf": {"val": "double"},
    "Pad": {"pad_width": "repeated int64"},
    "Transpose": {"axes": "repeated int64"},
    "Tile": {"reps": "repeated int64"},
    "Flip": {"axes": "repeated int64"},
    "Shift": {"shifts": "repeated int64"},
    "ScatterNd": {"shape": "repeated int64"},
    "Interpolate": {"output_size": "repeated int64"},
    "ONNXResize": {"sizes": "repeated int64"},
    "Dropout": {"p": "double"},
    "RandomFlip": {"axes": "repeated int64"},
    "RandomShift": {"shifts": "repeated int64"},
    "AffineGrid": {"size": "repeated int64"},
    "INQAffine": {"inq_iterations": "repeated int64"},
    "INQConvolution": {"inq_iterations": "repeated int64"},
}

SOLVER_FIELDS = {
    "Sgd": ("sgd_param", 100),
    "SgdW": ("sgdw_param", 101),
    "Momentum": ("momentum_param", 102),
    "Lars": ("lars_param", 103),
    "Nesterov": ("nesterov_param", 104),
    "Adadelta": ("adadelta_param", 105),
    "Adagrad": ("adagrad_param", 106),
    "AdaBelief": ("adabelief_param", 107),
    "RMSprop": ("rmsprop_param", 108),
    "RMSpropGraves": ("rmsprop_graves_param", 109),
    "Adam": ("adam_param", 110),
    "AdamW": ("adamw_param", 111),
    "AdaBound": ("adabound_param", 112),
    "Adamax": ("adamax_param", 113),
    "AMSGRAD": ("amsgrad_param", 114),
    "AMSBound": ("amsbound_param", 115),
    "Lamb": ("lamb_param", 116),
    "Lion": ("lion_param", 117),
}
