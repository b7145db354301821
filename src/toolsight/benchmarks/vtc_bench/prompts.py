"""VTC-Bench prompt texts, verbatim from the official evaluation code (data, not logic).

Sources (github.com/zhuzil/VTC-Bench, mirrored as cs-w0r1d/VTC-Bench @ 785c678):
- system prompts and user templates: `eval/eval_config/qwen3_vl_30B_A3B_Thinking_{interface,code,
  interface_WeakPrompt,interface_StrongPrompt}.yaml` (`agent.system_prompt`, `prompt_template`; YAML
  literal blocks, so each ends with one newline). The paper's App. D prints the same texts with the
  markdown and the last "Image Path **MUST** be Absolute Path" line lost in typesetting.
- loop notes and nudges: `eval/qwen_agent/agents/fncall_agent.py` (`FnCallAgent._run`).
- the `code_interpreter` tool description and its `code` parameter text ("Allowed Capabilities
  Reference"): `eval/qwen_agent/tools/code_interpreter.py`.
Trailing spaces the originals contain are written as explicit concatenations so that linters keep
them. Do not reformat these strings: the tests compare them byte for byte.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- system prompts

SYSTEM_STRONG = (
    "Your role is that of a helpful assistant specialized in solving real-world visual problems using image "
    "processing tools. Answer questions about images by combining your visual understanding with the precision "
    "of available tools.\n"
    "\n"
    "Please follow this structured thinking process and show your work.\n"
    "\n"
    "Start an iterative loop for each question:\n"
    "\n"
    "- **First, look closely:** Begin with a detailed description of the image in the context of the user's "
    "real-life query. List what is immediately visible, and explicitly identify what specific visual details "
    "need to be clarified, adjusted, or measured using tools.\n"
    "- **Next, apply tools:** Select and invoke just one appropriate function to process the image.\n"
    "- **Then, review the findings:** Carefully analyze the tool's output (e.g., the processed image, detected "
    "features, or status) and decide on your next action (e.g., did the rotation fix the view? do you need "
    "further adjustments?).\n"
    "\n"
    "Continue this loop until you have sufficient information.\n"
    "\n"
    "To finish, bring everything together in a clear, synthesized answer that fully responds to the user's "
    "question.\n"
    "\n"
    "Image Path **MUST** be Absolute Path. And only **ONE** tool can be used at a time.\n"
)

SYSTEM_WEAK = (
    "Your role is that of a helpful assistant specialized in solving real-world visual problems using image "
    "processing tools. " + "\n"
    "\n"
    "Image Path **MUST** be Absolute Path. And only **ONE** tool can be used at a time.\n"
)

# The driver's fallback when a config has no system prompt (`init_agent`); used for `base`.
SYSTEM_DEFAULT = "You are a helpful assistant."

# --------------------------------------------------------------------------- user templates

USER_TEMPLATE = (
    "<image>\n"
    "\n"
    "{question}\n"
    "\n"
    '### User Image Path:** "{image_path}"\n'
    "\n"
    '### User Image Size:** "{image_size}"\n'
    "\n"
    "### **Output Format (strict adherence required):**\n"
    "\n"
    "<think>Your detailed reasoning process, should go here.</think>\n"
    "\n"
    "<answer>Your final answer to the user's question goes here.</answer>\n"
)

USER_TEMPLATE_GT = (
    "<image>\n"
    "\n"
    "{question}\n"
    "\n"
    '### User Image Path:** "{image_path}"\n'
    "\n"
    '### User Image Size:** "{image_size}"\n'
    "\n"
    "### Here is the **Reference Trajectory**. You can refer to this trajectory to use tools to solve "
    'problems :  "{reference_trajectory}"\n'
    "\n"
    "### **Output Format (strict adherence required):**\n"
    "\n"
    "<think>Your detailed reasoning process, should go here.</think>\n"
    "\n"
    "<answer>Your final answer to the user's question goes here.</answer>\n"
)

# --------------------------------------------------------------------------- loop notes (fncall_agent.py)

# appended to a tool result when 1 < N <= 5 model calls remain
REMAINING_NOTE = "\n[Note: You have {n} more conversation opportunities remaining.]"

# appended to a tool result when exactly 1 model call remains; {question} = the question part of the
# first user message (text between "<image>\n\n" and "\n\n### User Image Path")
LAST_CALL_NOTE = (
    "\n[You have just 1 more conversation opportunity. Please answer the following questions directly "
    "based on the results of the previous processing: [{question}]], ### **Output Format (strict adherence "
    "required):**\n<think>Your detailed reasoning process, should go here.</think>\n<answer>Your final "
    "answer to the user's question goes here.</answer>"
)

# user message when a round has neither a tool call nor an <answer> tag and calls remain
CONTINUE_NUDGE = "Please continue the analysis based on the tool"

# user message when a round has neither a tool call nor an <answer> tag and no calls remain (one more
# call is granted)
FINAL_NUDGE = "Please provide your final answer in the required format:\n<answer>Your final answer here</answer>"

# user message when the last call's output lacks "<answer>" (up to NO_ANSWER_RETRIES times)
NO_ANSWER_RETRY = (
    "Please answer the questions directly based on the results of the previous processing. Please provide "
    "your final answer in the required format:\n<answer>Your final answer here</answer>."
)

# for models that cannot take images in tool messages (reference: names containing 'gemini' or '4o')
TOOL_IMAGE_NOTE = "This is tool processed image(s):"
TOOL_NO_TEXT = "Tool executed successfully."

# the driver re-runs a whole task (up to 3 attempts) when the answer is empty or contains one of these
RETRY_ANSWER_KEYWORDS = (
    "unable", "your final answer here", "cannot", "indiscernible", "insufficient", "unreadable",
)

# --------------------------------------------------------------------------- code track (code_interpreter.py)

CODE_TOOL_NAME = "code_interpreter"

CODE_TOOL_DESCRIPTION = (
    "A Python code interpreter specifically designed for image handling using OpenCV to assist users in "
    "answering questions. It allows executing Python code for image analysis, plotting, and manipulation "
    "tasks. Before executing code, provide a reasoning handle that summarizes previous results and explains "
    'the logic for the next action. Write the Python code directly in the "code" field.\n'
    "\n"
    "IMPORTANT: If you save images using cv2.imwrite() or similar functions, you MUST display them using "
    "IPython display to make them visible in the output. Use the following pattern:\n"
    "```python\n"
    "from IPython.display import Image, display\n"
    "cv2.imwrite('output.jpg', handled_image)\n"
    "display(Image(filename='output.jpg'))  # This is required to show the saved image\n"
    "```\n"
    "Without the display() call, saved images will not be returned in the results.\n"
)

CODE_REASONING_DESCRIPTION = (
    "Summarize the previous code execution and its results, analyze the current state, and provide the "
    "Ratiocination for the subsequent code execution."
)

_CRITICAL = """**CRITICAL INSTRUCTIONS FOR MODEL:**
1.  **RESTRICTED SCOPE:** You are strictly permitted to implement *only* the specific {what} defined in the "Allowed Capabilities Reference" section below. Do not generate code for operations outside this list.
2.  **NO PRE-DEFINED FUNCTIONS:** The list below defines *behaviors*, NOT callable functions.
    - INCORRECT: Calling `colorspace_gray(image)` or `resize(image, param)`. These functions DO NOT exist.
    - CORRECT: You must write the raw Python code using the `cv2` library to implement the logic described. For example, to achieve 'colorspace_gray', you must write `cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)`.
3.  **PARAMETER ADHERENCE:** When writing the code, you must strictly follow the parameter logic described in the reference list (e.g., input ranges, default values, and calculation logic)."""

_CAPABILITIES = """# Allowed Capabilities Reference (Implement these using raw cv2 code)

The following sections describe the ONLY operations you are allowed to implement via Python code.

---

## 1. COLOR SPACE CONVERSION TOOLS

### colorspace_gray
**Description:** Converts the image to grayscale color space. Useful for enhancing contrast or isolating intensity information.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional): Empty parameter object

### colorspace_hsv
**Description:** Converts the image to HSV (Hue, Saturation, Value) color space. Useful for color-based segmentation or isolating specific color channels.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional): Empty parameter object

### colorspace_lab
**Description:** Converts the image to LAB color space. Useful for perceptual color operations or isolating specific color channels.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional): Empty parameter object

---

## 2. GEOMETRIC TRANSFORMATION TOOLS

### resize
**Description:** Resizes the image to specified dimensions or by a preset scale (half or double). You can specify any positive integer width and height (recommended range: 1-10000 pixels). Returns detailed size information including original and new dimensions.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `width` (integer, required): Positive integer for new width
  - `height` (integer, required): Positive integer for new height
  - `preset` (string, optional): Resize preset: 'half' or 'double'

### rotate
**Description:** Rotates the image by specified angle in degrees (clockwise). Supports arbitrary angles (e.g., 45, 90, 180, 270, etc.). The output image will be resized to fit the entire rotated content. Returns rotation details including angle, center point, and size changes.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `angle` (number, required): Rotation angle in degrees (clockwise). Can be any number

### translate
**Description:** Shifts the image by a specified number of pixels in the specified direction (left, right, up, or down). You can specify any positive integer distance (recommended range: 1-10000 pixels). Default distance is 32 pixels. Returns translation details including direction, distance, and translation vector.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `direction` (string, optional): Translation direction: 'left', 'right', 'up', or 'down'
  - `distance` (integer, optional): Translation distance in pixels (default: 32, recommended range: 1-10000)

### flip
**Description:** Flips the image horizontally or vertically.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `direction` (string, optional): Flip direction: 'horizontal' or 'vertical'

### crop
**Description:** Crops a rectangular region from the image. Returns the cropped region with detailed information about the crop area.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `x` (integer, optional): Non-negative integer for top-left x coordinate
  - `y` (integer, optional): Non-negative integer for top-left y coordinate
  - `width` (integer, optional): Positive integer for crop width
  - `height` (integer, optional): Positive integer for crop height

### zoom_in
**Description:** Zooms into a specific region of the image by cropping and optionally resizing. Useful for focusing on a particular area and enlarging it for better visibility.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `x` (integer, optional): Non-negative integer for region x coordinate
  - `y` (integer, optional): Non-negative integer for region y coordinate
  - `width` (integer, optional): Positive integer for region width
  - `height` (integer, optional): Positive integer for region height
  - `scale` (number, optional): Float 0-10 for zoom scale
  - `target_width` (integer, optional): Positive integer for target width
  - `target_height` (integer, optional): Positive integer for target height

---

## 3. FILTERING AND SMOOTHING TOOLS

### blur
**Description:** Applies blurring to reduce noise or smooth the image. Supports multiple blur methods: average (simple box blur), gaussian (weighted blur), median (good for salt-pepper noise), and bilateral (edge-preserving). Returns blur method and parameter details.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `method` (string, required): Blur method: 'average'/'avg', 'gaussian', 'median', 'bilateral'
  - `ksize` (integer, required): Kernel size (must be odd, 3-51). Default: 5
  - `sigma_x` (number, optional): Gaussian kernel std dev in X (0-10). Default: 0
  - `sigma_y` (number, optional): Gaussian kernel std dev in Y (0-10). Default: 0
  - `d` (integer, optional): Bilateral filter diameter (1-50). Default: 9
  - `sigma_color` (number, optional): Bilateral color sigma (1-200). Default: 75
  - `sigma_space` (number, optional): Bilateral space sigma (1-200). Default: 75

### denoise
**Description:** Applies fast non-local means denoising. Supports grayscale, color, or per-channel handling.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `mode` (string, optional): 'fast_means_gray', 'fast_means_color', 'fast_means_bgr_channel'. Default: 'fast_means_color'
  - `h` (number, optional): Float 1-50. Default: 10
  - `h_color` (number, optional): Float 1-50. Default: 10
  - `template_window` (integer, optional): Odd integer 3-21. Default: 7
  - `search_window` (integer, optional): Odd integer 3-31. Default: 21
  - `channels` (array, optional): List of channel indices [0, 1, 2]

---

## 4. THRESHOLDING AND BINARIZATION TOOLS

### threshold
**Description:** Applies thresholding to create a binary image. Supports multiple color modes (grayscale or BGR channel-wise) and various threshold methods.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `mode` (string, required): 'binary', 'otsu', 'adaptive_mean', 'adaptive_gaussian'. Default: 'otsu'
  - `invert` (boolean, optional): true or false. Default: false
  - `color_mode` (string, optional): 'grayscale' or 'bgr'. Default: 'grayscale'
  - `threshold_value` (integer, optional): Integer 0-255 (for binary mode)
  - `adaptive_block_size` (integer, optional): Odd integer 3-101. Default: 11
  - `adaptive_constant` (integer, optional): Integer. Default: 2
  - `channels` (array, optional): List of channel indices [0, 1, 2]

### inrange_color
**Description:** Creates a mask for pixels within a specified color range. Supports HSV or BGR colorspace and flexible output formats.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `colorspace` (string, optional): 'hsv' or 'bgr'. Default: 'hsv'
  - `lower` (array, optional): Lower bound [h/b, s/g, v/r]
  - `upper` (array, optional): Upper bound [h/b, s/g, v/r]
  - `output_format` (string, optional): 'mask', 'masked_image', 'both'. Default: 'both'

---

## 5. MORPHOLOGICAL OPERATIONS

### morphology
**Description:** Applies morphological operations (erode, dilate, open, close) with flexible kernel size and shape.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `op` (string, optional): 'erode', 'dilate', 'open', 'close'. Default: 'open'
  - `kernel_size` (integer, optional): Odd integer 3-21. Default: 3
  - `iterations` (integer, optional): Integer 1-10. Default: 1
  - `kernel_shape` (string, optional): 'rect' or 'ellipse'. Default: 'rect'

---

## 6. EDGE DETECTION TOOLS

### gradients
**Description:** Computes gradient images using Sobel (x or y direction) or Laplacian operator.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `mode` (string, required): 'sobel_x', 'sobel_y', 'laplacian'

### canny
**Description:** Detects edges using Canny edge detector. Supports preset thresholds or custom values, and can handle grayscale or individual BGR channels.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `preset` (string, optional): 'low', 'medium', 'high'. Default: 'medium'
  - `threshold_low` (integer, optional): Integer 0-255 (overrides preset)
  - `threshold_high` (integer, optional): Integer 0-255 (overrides preset)
  - `color_mode` (string, optional): 'grayscale' or 'bgr'. Default: 'grayscale'
  - `channels` (array, optional): List of channel indices [0, 1, 2]

### convertscaleabs
**Description:** Converts image to absolute value and scales it to 0-255 range. Useful for visualizing gradient images or other signed data. Applies scaling and offset transformations.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `alpha` (number, optional): Float. Default: 1.0
  - `beta` (number, optional): Float. Default: 0

---

## 7. CONTOUR DETECTION AND ANALYSIS TOOLS

### contours
**Description:** Finds contours using Canny edges and returns bounding boxes/areas. Helpful for locating shapes before further analysis.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `mode` (string, optional): 'external' or 'list'
  - `canny_low` (integer, optional): Integer. Default: 100
  - `canny_high` (integer, optional): Integer. Default: 200
  - `rank` (integer, optional): Integer (1 = largest)
  - `max_contours` (integer, optional): Integer. Default: 20

### contour_area
**Description:** Calculates contour areas using cv2.contourArea and overlays the values near each contour. Useful for comparing object sizes.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `mode` (string, optional): 'external' or 'list'
  - `canny_low` (integer, optional): Integer
  - `canny_high` (integer, optional): Integer
  - `rank` (integer, optional): Integer
  - `max_contours` (integer, optional): Integer
  - `color` (array, optional): BGR color [B, G, R]
  - `thickness` (integer, optional): Integer

### arc_length
**Description:** Computes contour perimeters using cv2.arcLength and overlays the values. Helps measure object outlines.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `mode` (string, optional): 'external' or 'list'
  - `canny_low` (integer, optional): Integer
  - `canny_high` (integer, optional): Integer
  - `rank` (integer, optional): Integer
  - `max_contours` (integer, optional): Integer
  - `color` (array, optional): BGR color [B, G, R]
  - `thickness` (integer, optional): Integer

### approx_poly
**Description:** Approximates contours with fewer points using cv2.approxPolyDP (epsilon_ratio controls simplification). Great for polygonal shape summaries.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `mode` (string, optional): 'external' or 'list'
  - `canny_low` (integer, optional): Integer
  - `canny_high` (integer, optional): Integer
  - `rank` (integer, optional): Integer
  - `max_contours` (integer, optional): Integer
  - `epsilon_ratio` (number, optional): Float. Default: 0.02
  - `color` (array, optional): BGR color [B, G, R]
  - `thickness` (integer, optional): Integer

### connected_components_with_stats
**Description:** Finds and analyzes connected components in a binary image. Returns statistics including bounding boxes, areas, and centroids for each component. Useful for object detection and region analysis.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `threshold_mode` (string, optional): 'otsu', 'binary', 'none'
  - `threshold_value` (integer, optional): Integer for binary mode. Default: 127
  - `connectivity` (integer, optional): 4 or 8. Default: 8
  - `max_components` (integer, optional): Integer. Default: 20

---

## 8. SHAPE DETECTION TOOLS

### hough_lines
**Description:** Detects line segments in the image using Hough transform. Returns line coordinates and lengths. By default uses stricter parameters to reduce false positives. You can adjust threshold (higher = stricter, fewer lines) and minLineLength (higher = longer lines only) to control detection sensitivity.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `threshold` (integer, optional): Integer. Default: 80
  - `minLineLength` (integer, optional): Integer. Default: 50
  - `maxLineGap` (integer, optional): Integer. Default: 10
  - `canny_low` (integer, optional): Integer. Default: 80
  - `canny_high` (integer, optional): Integer. Default: 200
  - `max_lines` (integer, optional): Integer. Default: 20

### hough_circles
**Description:** Detects circles in the image using Hough transform. Returns circle centers and radii. By default uses stricter parameters to reduce false positives. You can adjust param2 (higher = stricter, fewer circles) and minDist (higher = circles must be farther apart) to control detection sensitivity.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `dp` (number, optional): Float. Default: 1.2
  - `minDist` (integer, optional): Integer. Default: 50
  - `param1` (integer, optional): Integer. Default: 100
  - `param2` (integer, optional): Integer. Default: 50
  - `minRadius` (integer, optional): Integer. Default: 10
  - `maxRadius` (integer, optional): Integer. Default: 0 (no limit)
  - `max_circles` (integer, optional): Integer. Default: 20

---

## 9. HISTOGRAM AND CONTRAST ENHANCEMENT

### histogram
**Description:** Applies histogram equalization or CLAHE to enhance image contrast. Supports multiple color modes (grayscale, BGR, HSV) and flexible channel selection to preserve color information or handle specific channels.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `mode` (string, optional): 'equalize' or 'clahe'
  - `color_mode` (string, optional): 'grayscale', 'bgr', 'hsv'. Default: 'grayscale'
  - `channels` (array, optional): List of channel indices [0, 1, 2]
  - `clip_limit` (number, optional): Float (for CLAHE)
  - `tile_grid_size` (array, optional): [width, height]. Default: [8, 8]

---

## 10. IMAGE SEGMENTATION TOOLS

### watershed
**Description:** Applies watershed segmentation to separate overlapping objects. Returns region count and labels.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `max_regions` (integer, optional): Integer. Default: 20

### grabcut
**Description:** Performs foreground/background segmentation using GrabCut algorithm with preset rectangle. Returns foreground pixel statistics.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `preset` (string, optional): 'center', 'tight', 'loose'

### floodfill
**Description:** Performs flood fill operation starting from a seed point. Fills connected pixels with similar color values. Useful for region segmentation and filling enclosed areas.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `x` (integer, optional): Non-negative integer for seed x coordinate
  - `y` (integer, optional): Non-negative integer for seed y coordinate
  - `loDiff` (array, optional): Lower difference [B, G, R]. Default: [10, 10, 10]
  - `upDiff` (array, optional): Upper difference [B, G, R]. Default: [10, 10, 10]
  - `newVal` (array, optional): New fill color [B, G, R]. Default: [0, 255, 0]
  - `flags` (integer, optional): Integer. Default: 4|FLOODFILL_FIXED_RANGE

---

## 11. ADVANCED OPERATIONS

### pyramid
**Description:** Applies image pyramid operations (upsample or downsample by one level). Returns size information.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `mode` (string, optional): 'pyr_up' or 'pyr_down'

### dft
**Description:** Computes and visualizes the Discrete Fourier Transform magnitude spectrum.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional): Empty parameter object

### template_match
**Description:** Matches a template image within the source image. Returns match score and bounding box coordinates.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `template_path` (string, optional): Path to template image
  - `method` (string, optional): 'sqdiff', 'ccorr', 'ccoeff'

### features
**Description:** Detects and draws keypoints using various feature detection methods (harris, shi_tomasi, sift, surf, fast, brief, orb). Returns keypoint coordinates.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `method` (string, optional): 'harris', 'shi_tomasi', 'sift', 'surf', 'fast', 'brief', 'orb'
  - `max_points` (integer, optional): Maximum number of keypoints to detect

### inpaint
**Description:** Inpaints (fills) regions in the image using automatically generated mask. Supports custom parameters for mask generation and inpainting method.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `preset` (string, optional): 'canny' or 'threshold'. Default: 'canny'
  - `canny_low` (integer, optional): Integer 0-255. Default: 100
  - `canny_high` (integer, optional): Integer 0-255. Default: 200
  - `threshold_value` (integer, optional): Integer 0-255. Default: 127
  - `radius` (integer, optional): Integer 1-10. Default: 3
  - `method` (string, optional): 'telea' or 'ns'. Default: 'telea'

---

## 12. DRAWING TOOLS

### draw_line
**Description:** Draws a line segment between two points with configurable color and thickness.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, required):
  - `x1` (integer, required): Integer for start x coordinate
  - `y1` (integer, required): Integer for start y coordinate
  - `x2` (integer, required): Integer for end x coordinate
  - `y2` (integer, required): Integer for end y coordinate
  - `color` (array, optional): BGR color [B, G, R]
  - `thickness` (integer, optional): Integer

### draw_circle
**Description:** Draws a circle on the image at specified center coordinates with given radius. Supports customizable color and thickness. Useful for marking circular regions or objects.
**Parameters:**
- `image` (string, required): The input image identifier
- `param` (object, optional):
  - `x` (integer, optional): Integer for center x coordinate
  - `y` (integer, optional): Integer for center y coordinate
  - `radius` (integer, optional): Positive integer for radius
  - `color` (array, optional): BGR color [B, G, R]. Default: [0, 255, 0]
  - `thickness` (integer, optional): Integer. Default: 2"""

# The `code` parameter's description: the same instruction block before and after the capability list
# (the second copy says "operations" where the first says "image handling operations"); it starts with a
# newline and ends with the 16 spaces that preceded the closing quotes in the original source.
CODE_PARAM_DESCRIPTION = (
    "\nExecutes Python code to handle images based strictly on the allowed capabilities listed below.\n\n"
    + _CRITICAL.format(what="image handling operations")
    + "\n\n---\n\n"
    + _CAPABILITIES
    + "\n\n"
    + _CRITICAL.format(what="operations")
    + "\n"
    + " " * 16
)

CODE_TOOL_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "reasoning": {"description": CODE_REASONING_DESCRIPTION, "type": "string"},
        "code": {"description": CODE_PARAM_DESCRIPTION, "type": "string"},
    },
    "required": ["reasoning", "code"],
}
